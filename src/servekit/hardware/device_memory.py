"""The one device table: the memory vLLM sees on each GPU model, from public start-up logs.

vLLM budgets ``--gpu-memory-utilization`` times the total that ``torch.cuda.mem_get_info``
reports, which is less than the nominal size on the box (an "80 GB" H100 reports 79.19 GiB,
a "48 GB" L40S 44.42 GiB). Each row gives that total for one GPU model with the public log it
was read from. The planner's hardware profiles (``servekit.hardware.profile``) and the measured
points (``servekit.fit.gpu_models``) both read this table, so a plan and a point on the same part
budget the same memory.

A part with no row is priced from its nominal size: ``USABLE_FRACTION`` of it (NVIDIA and other
parts) or ``AMD_USABLE_FRACTION`` (AMD Instinct), and its profile says the figure is assumed. A
taxonomy entry states that size; a part only the device speed table names (a measured point's
``gpu``) takes it from ``NOMINAL_MEMORY``, its datasheet's figure.
"""

from __future__ import annotations

import re

from servekit.records import record

USABLE_FRACTION = 31.4 / 32
"""Share of a device's nominal memory assumed usable when no row of the table names the part:
a 32 GB RTX 5090 reports 31.4 GiB (seed 003's guide); an assumption for parts never measured."""

AMD_USABLE_FRACTION = 191.98 / 192
"""Share of an AMD Instinct part's nominal memory the engine sees: an MI300X (192 GB) prints
191.98 GiB (vllm-project/vllm#53961); assumed for the other Instinct parts."""


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
    DeviceMemory("mi300x", r"\bmi300x\b", 191.98, "vllm-project/vllm#53961 (AMD Instinct MI300X)"),
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


NOMINAL_MEMORY: tuple[NominalMemory, ...] = (
    NominalMemory("h100_nvl", 94, "https://www.nvidia.com/en-us/data-center/h100/ (H100 NVL: 94 GB)"),
    NominalMemory("h100_pcie", 80, "https://www.nvidia.com/en-us/data-center/h100/ (H100 PCIe: 80 GB)"),
    NominalMemory("h800", 80, "https://www.nvidia.cn/data-center/h800/ (H800 SXM: 80 GB HBM3)"),
    NominalMemory("a800", 80, "https://www.nvidia.cn/data-center/a800/ (A800 80GB SXM)"),
    NominalMemory("h20", 96, "https://www.nvidia.com/en-us/data-center/h20/ (96 GB HBM3)"),
    NominalMemory("gh200", 96, "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/ (96 GB HBM3)"),
    NominalMemory("l4", 24, "https://www.nvidia.com/en-us/data-center/l4/ (24 GB GDDR6)"),
    NominalMemory("l40", 48, "https://www.nvidia.com/en-us/data-center/l40/ (48 GB GDDR6)"),
    NominalMemory("a40", 48, "https://www.nvidia.com/en-us/data-center/a40/ (48 GB GDDR6)"),
    NominalMemory("rtx_a6000", 48, "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/ (48 GB GDDR6)"),
    NominalMemory("rtx_6000_ada", 48, "https://www.nvidia.com/en-us/design-visualization/rtx-6000/ (48 GB GDDR6)"),
    NominalMemory("rtx_4090", 24, "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/ "
                  "(24 GB GDDR6X)"),
    NominalMemory("a10", 24, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (24 GB GDDR6)"),
    NominalMemory("rtx_3090", 24, "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/ "
                  "(24 GB GDDR6X)"),
    NominalMemory("a100_40gb", 40, "https://www.nvidia.com/en-us/data-center/a100/ (A100 40GB SXM)"),
    NominalMemory("a30", 24, "https://www.nvidia.com/en-us/data-center/products/a30-gpu/ (24 GB HBM2)"),
    NominalMemory("t4", 16, "https://www.nvidia.com/en-us/data-center/tesla-t4/ (16 GB GDDR6)"),
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


def assumed_note(nominal_gb: float, amd: bool = False) -> str:
    """How ``assumed_gib`` priced a part's memory, for a profile's ``memory_source``."""
    share = "191.98/192 (AMD Instinct)" if amd else "31.4/32"
    return f"assumed: {share} of the nominal {nominal_gb:g} GB (no start-up log of this part in the device table)"


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


def assumed_gib(nominal_gb: float, amd: bool = False) -> float:
    """Usable memory of a part no row names, from its nominal size (an assumption)."""
    return round(nominal_gb * (AMD_USABLE_FRACTION if amd else USABLE_FRACTION), 3)


NO_MEMORY = "none: no memory figure for this part, so the KV pool is not a limit"


def part_memory(memory_id: str | None, part_id: str, amd: bool = False) -> tuple[float, str]:
    """(GiB one device of a part offers the engine, where the figure comes from): the measured row
    ``memory_id`` names, else the part's datasheet size (``NOMINAL_MEMORY``) at the assumed usable
    share, else 0 (``NO_MEMORY``)."""
    measured = memory_row(memory_id) if memory_id else None
    if measured:
        return measured.memory_gib, f"measured: {measured.source}"
    nominal = nominal_row(part_id)
    if nominal:
        return assumed_gib(nominal.gb, amd), f"{assumed_note(nominal.gb, amd)}; {nominal.source}"
    return 0.0, NO_MEMORY
