"""The one device table: the memory vLLM sees on each GPU model, from public start-up logs.

vLLM budgets ``--gpu-memory-utilization`` times the total that ``torch.cuda.mem_get_info``
reports, which is less than the nominal size on the box (an "80 GB" H100 reports 79.19 GiB,
a "48 GB" L40S 44.42 GiB). Each row gives that total for one GPU model with the public log it
was read from. The planner's hardware profiles (``servekit.hardware.profile``) and the measured
points (``servekit.fit.gpu_models``) both read this table, so a plan and a point on the same part
budget the same memory.

A part with no row is priced from its nominal size by ``assumed_gib``: the size, less the sixteenth
that ECC keeps on a data-centre card's GDDR memory, less the reservation the measured rows of its
vendor show (``Reservation``, fitted on those rows; ``bench/bench_device_memory.py`` prints the
fit and its leave-one-out error). Its profile says the figure is assumed. A taxonomy entry states
the size; a part only the device speed table names (a measured point's ``gpu``) takes it from
``NOMINAL_MEMORY``, its datasheet's figure.
"""

from __future__ import annotations

import re
import statistics

from servekit.records import record

ECC_SHARE = 15 / 16
"""Share of a GDDR card's memory left when ECC is on: the check bits live in the same DRAM (NVIDIA
data-centre GDDR6 cards keep ECC on by default; the measured A10, L4, L40 and L40S rows each sit
within 0.6 GiB under 15/16 of their size)."""


@record
class DeviceMemory:
    """The total memory one GPU model reports to the engine."""

    id: str
    """The GPU model's id, as kv-points name it (``gpu_model``)."""
    pattern: str
    """Regular expression over the lower-cased model name (a log's GPU name or a profile's
    display name)."""
    memory_gib: float
    source: str
    """The public log the figure was read from."""
    brand: str = "NVIDIA"
    """The vendor, whose measured rows price the vendor's unmeasured parts (``Reservation``)."""


DEVICE_MEMORY: tuple[DeviceMemory, ...] = (
    DeviceMemory("h200", r"\bh200\b", 139.8,
                 "Kimi-K2-Thinking start-up log on H200 (vllm-project/recipes Kimi-K2-Think.md); measured the same "
                 "(139.801 GiB, torch.cuda.mem_get_info) on an H200 by bench/gpu_probe.py, "
                 "bench/results/gpu-probe-h200-2026-12-04.json"),
    DeviceMemory("h100", r"\bh100\b(?!.*\bnvl\b)", 79.19,
                 "llm-d-incubation/llm-d-planner accuracy logs, vLLM 0.19.0 on H100-80GB-HBM3 ('79.19 GiB')"),
    DeviceMemory("a100_40gb", r"\ba100\b.*\b40 ?gb\b|\ba100-(?:sxm4|pcie)-40gb\b", 39.39,
                 "vLLM 0.7.1 log on ml.p4d.24xlarge (A100-SXM4-40GB), SageMaker LMI DeepSeek-Coder-V2 "
                 "walkthrough: 'total_gpu_memory (39.39GiB)'"),
    DeviceMemory("a100_80gb", r"\ba100\b", 79.15,
                 "dennislee22/vLLM-benchmarking vllm-7B-1gpuA10080GB logs (vLLM 0.10.1.1)"),
    DeviceMemory("l40s", r"\bl40s\b", 44.42,
                 "4xL40S (AWS g6e) serving guide and IBM CodeEngine serverless-fleets inferencing logs"),
    DeviceMemory("l40", r"\bl40\b", 44.40,
                 "QwenLM/Qwen3-VL#2097 ('OutOfMemoryError in single L40 GPU': PyTorch's 'GPU 0 has a total "
                 "capacity of 44.40 GiB', the cudaMemGetInfo total vLLM reads too)"),
    DeviceMemory("l4", r"\bl4\b", 22.03,
                 "akshathtiwari/spec-fp8-study findings/F023 (vLLM on a Modal L4: 'free_before_boot = 22561.0 MiB "
                 "(22.03 GiB card, nothing resident)' and PyTorch's 'GPU 0 has a total capacity of 22.03 GiB')"),
    DeviceMemory("a10", r"\ba10\b(?!g)", 22.06, "vllm-project/vllm#17327 (A10 24 GB, vLLM 0.8.5)"),
    DeviceMemory("rtx_3090", r"\brtx 3090\b(?! ti)", 23.58,
                 "vllm-project/vllm#10517 and #14447 logs: 'total_gpu_memory (23.58GiB)'"),
    DeviceMemory("rtx_5090", r"\brtx 5090\b", 31.4,
                 "seed 003 (Qwen3.8-27B recipe guide): 'One card has 31.4 GiB usable'"),
    DeviceMemory("rtx_pro_6000", r"\brtx pro 6000\b", 95.6,
                 "vllm-project/recipes commit 22972927 'Verify Qwen3.8-27B on RTX Pro 6000' (Blackwell Max-Q)"),
    DeviceMemory("b200", r"\bb200\b", 178.35,
                 "stas00/ml-engineering debug/pytorch.md (an OOM 'On NVIDIA B200 w/ 180GiB of HBM': 'GPU 0 has a total "
                 "capacity of 178.35 GiB'); Jackmin801/prime-rl-hardfork benchmarks/results/BENCHMARKS.md on 8xB200 "
                 "gives 178.36"),
    DeviceMemory("h100_nvl", r"\bh100 nvl\b", 93.00,
                 "ali-vilab/VACE#56 (an H100 NVL 94GB on RunPod: 'GPU 0 has a total capacity of 93.00 GiB')"),
    DeviceMemory("h20", r"\bh20\b", 95.00,
                 "alipay/PainlessInferenceAcceleration flood/flood/ops/seg_attn.py (\"_CudaDeviceProperties(name='NVIDIA "
                 "H20', ..., total_memory=97285MB\": 95.00 GiB)"),
    DeviceMemory("a800", r"\ba800\b", 79.33,
                 "vllm-project/vllm#13067 ('8*A800': 'GPU 0 has a total capacity of 79.33 GiB'); hahnyuan/PB-LLM#3 "
                 "(A800-80G) gives the same"),
    DeviceMemory("a30", r"\ba30\b", 23.50,
                 "LHRLAB/ChatKBQA#2 (an A30: '23.50 GiB total capacity'); JakeFlasher/benchmark_flash_attention "
                 "results/benchmark-gqa-1.md (nvbench on an NVIDIA A30: '24060 MiB Total')"),
    DeviceMemory("rtx_a6000", r"\b(?:rtx )?a6000\b", 47.54,
                 "vllm-project/vllm#10360 (an A6000 (48G): 'total_gpu_memory=47.54GiB'); google-research/semivl#18 "
                 "(2 x A6000: '47.54 GiB total capacity'); ECC off, as the card ships"),
    DeviceMemory("rtx_4090", r"\brtx 4090\b", 23.64,
                 "deepseek-ai/DeepSeek-V3#205 and 3DTopia/Phidias-Diffusion#8 (RTX 4090 24GB: 'GPU 0 has a total "
                 "capacity of 23.64 GiB')"),
    DeviceMemory("mi300x", r"\bmi300x\b", 191.98, "vllm-project/vllm#53961 (AMD Instinct MI300X)", "AMD"),
    DeviceMemory("trillium", r"\bv6e\b|\btrillium\b", 31.24,
                 "the HBM limit vLLM on TPU budgets from (JAX bytes_limit): 'Memory statistics | "
                 "total_hbm_limit_gb=31.24GiB' on one v6e chip, vLLM 0.29.1rc1 TPU image (the jev-tpu-31b write-up "
                 "of xbill9/gemma4-dev, Gemma 4 26B-A4B on ct6e-standard-1t)", "Google"),
    DeviceMemory("tpu_v5e", r"\bv5e\b|\bv5 ?lite(?:pod)?\b", 15.75,
                 "the HBM limit vLLM on TPU budgets from (JAX bytes_limit): 'Memory statistics | "
                 "total_hbm_limit_gb=15.75GiB' on a v5e-1, vLLM 0.26.0 (keras-team/keras-io "
                 "guides/keras_hub/serving_with_vllm)", "Google"),
)


@record
class NominalMemory:
    """The memory one device of a part has by its datasheet, for a part no taxonomy entry names."""

    id: str
    """The part's id in the device speed table (``servekit.hardware.device_compute``)."""
    gb: float
    """Nominal GB per device."""
    source: str
    """The datasheet the figure was read from."""
    ecc: bool = False
    """GDDR memory with ECC on by default (a data-centre card): ECC keeps ``1 - ECC_SHARE`` of it."""


NOMINAL_MEMORY: tuple[NominalMemory, ...] = (
    NominalMemory("h200", 141, "https://www.nvidia.com/en-us/data-center/h200/ (141 GB HBM3e)"),
    NominalMemory("h100", 80, "https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM: 80 GB)"),
    NominalMemory("a100_80gb", 80, "https://www.nvidia.com/en-us/data-center/a100/ (A100 80GB SXM)"),
    NominalMemory("l40s", 48, "https://www.nvidia.com/en-us/data-center/l40s/ (48 GB GDDR6 with ECC)", ecc=True),
    NominalMemory("rtx_5090", 32, "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/ "
                  "(32 GB GDDR7)"),
    NominalMemory("rtx_pro_6000", 96, "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/"
                  "rtx-pro-6000/ (96 GB GDDR7 with ECC, off by default on a workstation card)"),
    NominalMemory("mi300x", 192, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (192 GB)"),
    NominalMemory("h100_nvl", 94, "https://www.nvidia.com/en-us/data-center/h100/ (H100 NVL: 94 GB)"),
    NominalMemory("h100_pcie", 80, "https://www.nvidia.com/en-us/data-center/h100/ (H100 PCIe: 80 GB)"),
    NominalMemory("h800", 80, "https://www.nvidia.cn/data-center/h800/ (H800 SXM: 80 GB HBM3)"),
    NominalMemory("a800", 80, "https://www.nvidia.cn/data-center/a800/ (A800 80GB SXM)"),
    NominalMemory("h20", 96, "https://www.nvidia.com/en-us/data-center/h20/ (96 GB HBM3)"),
    NominalMemory("gh200", 96, "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/ (96 GB HBM3)"),
    NominalMemory("l4", 24, "https://www.nvidia.com/en-us/data-center/l4/ (24 GB GDDR6)", ecc=True),
    NominalMemory("l40", 48, "https://www.nvidia.com/en-us/data-center/l40/ (48 GB GDDR6)", ecc=True),
    NominalMemory("a40", 48, "https://www.nvidia.com/en-us/data-center/a40/ (48 GB GDDR6 with ECC; on by default: "
                  "nvidia-smi's '46068MiB' total in chatdoc-com/OCRFlux#64)", ecc=True),
    NominalMemory("rtx_a6000", 48, "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/ (48 GB GDDR6)"),
    NominalMemory("rtx_6000_ada", 48, "https://www.nvidia.com/en-us/design-visualization/rtx-6000/ (48 GB GDDR6)"),
    NominalMemory("rtx_4090", 24, "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/ "
                  "(24 GB GDDR6X)"),
    NominalMemory("a10", 24, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (24 GB GDDR6)", ecc=True),
    NominalMemory("rtx_3090", 24, "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/ "
                  "(24 GB GDDR6X)"),
    NominalMemory("a100_40gb", 40, "https://www.nvidia.com/en-us/data-center/a100/ (A100 40GB SXM)"),
    NominalMemory("a30", 24, "https://www.nvidia.com/en-us/data-center/products/a30-gpu/ (24 GB HBM2)"),
    NominalMemory("t4", 16, "https://www.nvidia.com/en-us/data-center/tesla-t4/ (16 GB GDDR6)", ecc=True),
    NominalMemory("v100", 32, "https://www.nvidia.com/en-us/data-center/v100/ (V100 SXM2: 32 GB HBM2)"),
    NominalMemory("v100_16gb", 16, "https://www.nvidia.com/en-us/data-center/v100/ (V100 SXM2: 16 GB HBM2)"),
    NominalMemory("v100_pcie", 32, "https://www.nvidia.com/en-us/data-center/v100/ (V100 PCIe: 32 GB HBM2)"),
    NominalMemory("b200", 180, "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200: 1.4 TB over 8 GPUs)"),
    NominalMemory("gb200", 186, "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (GB200: 186 GB HBM3e per GPU)"),
    NominalMemory("b300", 288, "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B300: 2.3 TB over 8 GPUs)"),
    NominalMemory("gb300", 288, "https://www.nvidia.com/en-us/data-center/gb300-nvl72/ (288 GB HBM3e per GPU)"),
    NominalMemory("mi325x", 256, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html (256 GB)"),
    NominalMemory("mi350x", 288, "https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html (288 GB)"),
    NominalMemory("mi355x", 288, "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html (288 GB)"),
    NominalMemory("trillium", 32, "https://cloud.google.com/tpu/docs/v6e (32 GB HBM per chip)"),
    NominalMemory("ascend_950pr", 128, "Huawei Connect 2025 announcement as reported (950PR: 128 GB HiBL 1.0)"),
    NominalMemory("tpu_v5e", 16, "https://cloud.google.com/tpu/docs/v5e (16 GB HBM2 per chip)"),
    NominalMemory("tpu_v5p", 95, "https://cloud.google.com/tpu/docs/v5p (95 GB HBM2e per chip)"),
)


def nominal_row(device_id: str) -> NominalMemory | None:
    """The nominal size of a part of the device speed table; None when the table has none."""
    return next((row for row in NOMINAL_MEMORY if row.id == device_id), None)


def _normal(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.strip().lower())


def measured_memory(name: str) -> DeviceMemory | None:
    """The table's row for the GPU model a name names, first match wins; None when no row does."""
    lower = _normal(name)
    for row in DEVICE_MEMORY:
        if re.search(row.pattern, lower):
            return row
    return None


def memory_row(device_id: str) -> DeviceMemory | None:
    """The table's row with this id; None when no row has it."""
    return next((row for row in DEVICE_MEMORY if row.id == device_id), None)


def part_ecc(part_id: str) -> bool:
    """Whether the datasheet row of a part says ECC keeps a share of its memory."""
    nominal = nominal_row(part_id)
    return bool(nominal and nominal.ecc)


def capacity_gb(nominal: NominalMemory) -> float:
    """The nominal size less what ECC keeps (``ECC_SHARE``) on a part with ``ecc``."""
    return _capacity(nominal.gb, nominal.ecc)


def _capacity(nominal_gb: float, ecc: bool) -> float:
    return nominal_gb * (ECC_SHARE if ecc else 1.0)


@record
class Reservation:
    """What a vendor's devices keep from the engine: ``intercept_gib + per_gb`` x nominal GB (a
    line through the measured rows, fitted by least squares; the mean when fewer than three
    rows), read off ``capacity_gb - memory_gib`` of each row. The nominal figure is read as GiB,
    as vendors' memory sizes are binary; the line absorbs what that leaves over."""

    brand: str
    intercept_gib: float
    per_gb: float
    rows: tuple[str, ...]
    """The calibration set: the measured rows the line was fitted on."""

    def gib(self, nominal_gb: float) -> float:
        return self.intercept_gib + self.per_gb * nominal_gb

    def seen_gib(self, nominal_gb: float, ecc: bool = False) -> float:
        """What a part of ``nominal_gb`` offers the engine under this reservation."""
        return _capacity(nominal_gb, ecc) - self.gib(nominal_gb)


def calibration_points(brand: str, rows: tuple[DeviceMemory, ...] = DEVICE_MEMORY) -> list[tuple[str, float, float]]:
    """(row id, nominal GB, GiB kept) of each measured row of ``brand`` with a datasheet size."""
    points = []
    for row in rows:
        nominal = nominal_row(row.id)
        if row.brand == brand and nominal is not None:
            points.append((row.id, nominal.gb, capacity_gb(nominal) - row.memory_gib))
    return points


def fit_reservation(brand: str, points: list[tuple[str, float, float]]) -> Reservation:
    """The line through ``points`` (``calibration_points``); the mean below three of them."""
    ids = tuple(point[0] for point in points)
    sizes, kept = [point[1] for point in points], [point[2] for point in points]
    if len(points) < 3 or len(set(sizes)) < 2:
        return Reservation(brand, statistics.fmean(kept), 0.0, ids)
    slope, intercept = statistics.linear_regression(sizes, kept)
    return Reservation(brand, intercept, slope, ids)


RESERVATIONS = {brand: fit_reservation(brand, calibration_points(brand)) for brand in ("NVIDIA", "AMD")}
"""The reservation of each vendor with measured rows. A part of another vendor (a TPU, an Arc, an
Ascend, a CPU node) is assumed to keep what NVIDIA's do."""


def reservation(amd: bool = False) -> Reservation:
    return RESERVATIONS["AMD" if amd else "NVIDIA"]


def assumed_gib(nominal_gb: float, amd: bool = False, ecc: bool = False) -> float:
    """Memory the engine sees on a part no row names, from its nominal size (an assumption):
    the size, less ECC's share on a part with ``ecc``, less its vendor's ``Reservation``."""
    return round(reservation(amd).seen_gib(nominal_gb, ecc), 3)


def nominal_gb_of(memory_gib: float, amd: bool = False) -> float:
    """The nominal size whose ``assumed_gib`` (without ECC) is ``memory_gib``: its inverse."""
    rule = reservation(amd)
    return round((memory_gib + rule.intercept_gib) / (1.0 - rule.per_gb), 3)


def assumed_note(nominal_gb: float, amd: bool = False, ecc: bool = False) -> str:
    """How ``assumed_gib`` priced a part's memory, for a profile's ``memory_source``."""
    rule = reservation(amd)
    size = f"15/16 of the nominal {nominal_gb:g} GB (ECC on GDDR)" if ecc else f"the nominal {nominal_gb:g} GB"
    kept = f"{rule.intercept_gib:.2f} GiB + {rule.per_gb * 100:.2f}% of the size" if rule.per_gb else \
        f"{rule.intercept_gib:.2f} GiB"
    rows = f"{len(rule.rows)} measured {rule.brand} row{'' if len(rule.rows) == 1 else 's'}"
    return (f"assumed: {size} less what {rule.brand} parts keep ({kept}, fitted on the {rows}); "
            "no start-up log of this part in the device table")


NO_MEMORY = "none: no memory figure for this part, so the KV pool is not a limit"


def part_memory(memory_id: str | None, part_id: str, amd: bool = False) -> tuple[float, str]:
    """(GiB one device of a part offers the engine, where the figure comes from): the measured row
    ``memory_id`` (else ``part_id``) names, else the part's datasheet size (``NOMINAL_MEMORY``)
    priced by ``assumed_gib``, else 0 (``NO_MEMORY``)."""
    measured = memory_row(memory_id or part_id)
    if measured:
        return measured.memory_gib, f"measured: {measured.source}"
    nominal = nominal_row(part_id)
    if nominal:
        return (assumed_gib(nominal.gb, amd, nominal.ecc),
                f"{assumed_note(nominal.gb, amd, nominal.ecc)}; {nominal.source}")
    return 0.0, NO_MEMORY
