"""The device speed table: dense FLOPs per number format, memory bandwidth and the node's link,
each row with the vendor datasheet it was read from.

The memory a device offers lives in the one device memory table (``servekit.hardware.device_memory``);
this table gives what it takes to predict speed and names the memory row of the same part
(``memory_id``) instead of repeating it. Figures are the vendor's own (a part announced before its
datasheet is published cites the announcement as reported, and says so):

* ``tflops``: dense tensor-core TFLOPS per format (``bf16``, ``fp8``, ``fp4``); a datasheet that
  states only the figure with 2:4 sparsity is halved (NVIDIA marks those "with sparsity"); a part
  without BF16 (Volta, Turing) gives its FP16 figure as its 16-bit one, the format vLLM runs 16-bit
  weights in there (``--dtype auto`` casts BF16 checkpoints to FP16 on such a GPU);
  a format the part does not compute natively has no entry (its weights run through a wider
  format: ``compute_format``);
* ``memory_gb_s``: memory bandwidth of one device, GB/s;
* ``link_gb_s``: bandwidth one device can send to its peers at once, GB/s in one direction
  (NVLink, ICI and Huawei's UnifiedBus figures are quoted for both directions together and halved
  here; PCIe x16 Gen3 moves 16 GB/s, Gen4 32 GB/s and Gen5 64 GB/s each way, x8 half; an
  Instinct part's seven xGMI links are summed).

A part with no row has no speed prediction: ``servekit perf`` says so and names this table.
"""

from __future__ import annotations

import math
import re
from dataclasses import field

from servekit.records import record

PCIE3 = 16.0
PCIE4 = 32.0
PCIE5 = 64.0
"""GB/s one way over a PCIe x16 slot (PCI-SIG: Gen3 8 GT/s, Gen4 16 GT/s and Gen5 32 GT/s per lane,
128b/130b)."""

FORMATS = ("bf16", "fp8", "fp4")
WIDE_FORMATS = {"fp4": ("fp8", "bf16"), "fp8": ("bf16",), "bf16": ()}


@record
class DeviceCompute:
    """Speed facts of one device model."""

    id: str
    """The part's id: a taxonomy id without its card-count suffix (``rtx_pro_6000``)."""
    tflops: dict[str, float] = field(hash=False)
    """Dense TFLOPS per format (``FORMATS``)."""
    memory_gb_s: float
    link: str
    """nvlink | xgmi | pcie | ici | unifiedbus | none (the way devices of a node talk)."""
    link_gb_s: float
    source: str
    """The vendor datasheet (URL) the figures were read from."""
    memory_id: str | None = None
    """The row of ``servekit.hardware.device_memory`` for the same part, when it has one."""
    aliases: tuple[str, ...] = ()
    """Other names of the part (lower case, ``_`` for spaces): display names of taxonomy entries."""
    measured: str = ""
    """For a row measured on a machine rather than read from a datasheet: how it was measured."""
    generation: str = ""
    """NVIDIA generation (volta, turing, ampere, ada, hopper, blackwell), or ``tpu``: what a part no
    taxonomy entry names is priced by, and what a kv-points ``gpu_model`` of a part without a
    measured memory row says of it (``servekit.fit.gpu_models``)."""
    stream_gb_s: tuple[tuple[float, float], ...] = ()
    """For a measured row: (MiB of weights, GB/s they stream at) per size measured, smallest
    first; a set the caches hold part of streams faster than ``memory_gb_s``."""
    brand: str = ""
    """The vendor, where the link does not say it (``LINK_BRAND``): Intel's PCIe cards."""

    def memory_for(self, size_bytes: float) -> float:
        """GB/s at which ``size_bytes`` of weights stream: interpolated in the logarithm of the
        size between the measured sizes of ``stream_gb_s`` (the nearest end beyond them);
        ``memory_gb_s`` for a row without them."""
        curve = self.stream_gb_s
        if not curve:
            return self.memory_gb_s
        mib = size_bytes / 1024**2
        if mib <= curve[0][0]:
            return curve[0][1]
        for (low, low_rate), (high, high_rate) in zip(curve, curve[1:], strict=False):
            if mib <= high:
                share = math.log(mib / low) / math.log(high / low)
                return low_rate + share * (high_rate - low_rate)
        return curve[-1][1]

    def flops(self, fmt: str) -> float | None:
        """Dense FLOP/s in ``fmt``; None when the part has no figure for it."""
        tf = self.tflops.get(fmt)
        return tf * 1e12 if tf else None


def _nv(url: str) -> str:
    return f"NVIDIA datasheet {url}"


DEVICE_COMPUTE: tuple[DeviceCompute, ...] = (
    DeviceCompute("h100", {"bf16": 989.4, "fp8": 1978.9}, 3350, "nvlink", 450,
                  _nv("https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM: BF16 1,979 / FP8 3,958 TFLOPS "
                      "with sparsity, 3.35 TB/s, NVLink 900 GB/s)"), "h100", ("h100_sxm", "h100_sxm5", "h100_80gb"),
                  generation="hopper"),
    DeviceCompute("h200", {"bf16": 989.4, "fp8": 1978.9}, 4800, "nvlink", 450,
                  _nv("https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM: BF16 1,979 / FP8 3,958 TFLOPS "
                      "with sparsity, 4.8 TB/s, NVLink 900 GB/s)"), "h200", ("h200_sxm", "h200_141gb"),
                  generation="hopper"),
    DeviceCompute("a100", {"bf16": 312.0}, 2039, "nvlink", 300,
                  _nv("https://www.nvidia.com/en-us/data-center/a100/ (A100 80GB SXM: BF16 312 TFLOPS, "
                      "2,039 GB/s, NVLink 600 GB/s)"), "a100_80gb", ("a100_80gb", "a100_sxm", "a100_sxm4_80gb"),
                  generation="ampere"),
    DeviceCompute("a100_40gb", {"bf16": 312.0}, 1555, "nvlink", 300,
                  _nv("https://www.nvidia.com/en-us/data-center/a100/ (A100 40GB SXM: BF16 312 TFLOPS, "
                      "1,555 GB/s, NVLink 600 GB/s)"), "a100_40gb", generation="ampere"),
    DeviceCompute("l40s", {"bf16": 362.05, "fp8": 733.0}, 864, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/data-center/l40s/ (BF16 362.05 / FP8 733 TFLOPS dense, "
                      "864 GB/s, PCIe Gen4 x16)"), "l40s"),
    DeviceCompute("a10", {"bf16": 125.0}, 600, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (BF16 125 TFLOPS, 600 GB/s, "
                      "PCIe Gen4)"), "a10", generation="ampere"),
    DeviceCompute("b200", {"bf16": 2250.0, "fp8": 4500.0, "fp4": 9000.0}, 8000, "nvlink", 900,
                  _nv("https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200, 8 GPUs: FP4 144 / FP8 72 / "
                      "BF16 36 PFLOPS with sparsity, 64 TB/s HBM3e, NVLink 1.8 TB/s per GPU)"),
                  aliases=("b200_sxm", "hgx_b200"),
                  generation="blackwell"),
    DeviceCompute("gb200", {"bf16": 2500.0, "fp8": 5000.0, "fp4": 10000.0}, 8000, "nvlink", 900,
                  _nv("https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (72 GPUs: FP4 1,440 / FP8 720 / "
                      "BF16 360 PFLOPS with sparsity, 576 TB/s HBM3e, NVLink 130 TB/s)"),
                  aliases=("gb200_nvl4",), generation="blackwell"),
    DeviceCompute("b300", {"bf16": 2250.0, "fp8": 4500.0, "fp4": 13500.0}, 8000, "nvlink", 900,
                  _nv("https://www.nvidia.com/en-us/data-center/hgx/ (HGX B300, 8 GPUs: FP4 108 PFLOPS dense, "
                      "FP8 72 / BF16 36 PFLOPS with sparsity, NVLink 1.8 TB/s per GPU)"), generation="blackwell"),
    DeviceCompute("gb300", {"bf16": 2500.0, "fp8": 5000.0, "fp4": 15000.0}, 8000, "nvlink", 900,
                  _nv("https://www.nvidia.com/en-us/data-center/gb300-nvl72/ (72 GPUs: FP4 1,080 PFLOPS dense, "
                      "FP8 720 / BF16 360 PFLOPS with sparsity, 576 TB/s HBM3e)"),
                  aliases=("gb300_nvl4",), generation="blackwell"),
    DeviceCompute("rtx_pro_6000", {"bf16": 500.0, "fp8": 1000.0, "fp4": 2000.0}, 1792, "pcie", PCIE5,
                  _nv("https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/ "
                      "(4,000 AI TOPS FP4 with sparsity, 1,792 GB/s GDDR7, PCIe Gen5 x16); FP8 and BF16 at "
                      "half and a quarter of the FP4 rate"), "rtx_pro_6000"),
    DeviceCompute("rtx_5090", {"bf16": 419.0, "fp8": 838.0, "fp4": 1676.0}, 1792, "pcie", PCIE5,
                  _nv("https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/ (3,352 AI TOPS FP4 "
                      "with sparsity, 1,792 GB/s GDDR7, PCIe Gen5); FP8 and BF16 at half and a quarter"), "rtx_5090"),
    DeviceCompute("rtx_4090", {"bf16": 330.3, "fp8": 660.6}, 1008, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/ (1,321 AI TOPS FP8 "
                      "with sparsity, 1,008 GB/s GDDR6X, PCIe Gen4); BF16 at half the FP8 rate"), generation="ada"),
    DeviceCompute("h100_nvl", {"bf16": 835.5, "fp8": 1670.5}, 3900, "nvlink", 300,
                  _nv("https://www.nvidia.com/en-us/data-center/h100/ (H100 NVL: BF16 1,671 / FP8 3,341 TFLOPS "
                      "with sparsity, 3.9 TB/s, NVLink bridge 600 GB/s)"), generation="hopper"),
    DeviceCompute("h100_pcie", {"bf16": 756.5, "fp8": 1513.0}, 2000, "pcie", PCIE5,
                  _nv("https://www.nvidia.com/en-us/data-center/h100/ (H100 PCIe: BF16 1,513 / FP8 3,026 TFLOPS "
                      "with sparsity, 2 TB/s, PCIe Gen5)"), generation="hopper"),
    DeviceCompute("h20", {"bf16": 148.0, "fp8": 296.0}, 4000, "nvlink", 450,
                  _nv("https://www.nvidia.com/en-us/data-center/h20/ (H20: BF16 148 / FP8 296 TFLOPS dense, "
                      "4.0 TB/s HBM3, NVLink 900 GB/s)"), generation="hopper"),
    DeviceCompute("gh200", {"bf16": 989.4, "fp8": 1978.9}, 4000, "nvlink", 450,
                  _nv("https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/ (GH200 with 96 GB HBM3: "
                      "BF16 1,979 / FP8 3,958 TFLOPS with sparsity, 4 TB/s)"), generation="hopper"),
    DeviceCompute("h800", {"bf16": 989.4, "fp8": 1978.9}, 3350, "nvlink", 200,
                  _nv("https://www.nvidia.cn/data-center/h800/ (H800 SXM: BF16 1,979 / FP8 3,958 TFLOPS with "
                      "sparsity, 3.35 TB/s, NVLink 400 GB/s)"), aliases=("h800_sxm", "h800_80gb"),
                  generation="hopper"),
    DeviceCompute("a800", {"bf16": 312.0}, 2039, "nvlink", 200,
                  _nv("https://www.nvidia.cn/data-center/a800/ (A800 80GB SXM: BF16 312 TFLOPS, 2,039 GB/s, "
                      "NVLink 400 GB/s)"), aliases=("a800_80gb", "a800_sxm"), generation="ampere"),
    DeviceCompute("l40", {"bf16": 181.05, "fp8": 362.0}, 864, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/data-center/l40/ (BF16 181.05 / FP8 362 TFLOPS dense, "
                      "864 GB/s, PCIe Gen4 x16)"), "l40", generation="ada"),
    DeviceCompute("a40", {"bf16": 149.7}, 696, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/data-center/a40/ (BF16 149.7 TFLOPS dense, 696 GB/s, "
                      "PCIe Gen4)"), generation="ampere"),
    DeviceCompute("rtx_a6000", {"bf16": 154.85}, 768, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/design-visualization/rtx-a6000/ (309.7 tensor TFLOPS with "
                      "sparsity, 768 GB/s GDDR6, PCIe Gen4)"), aliases=("a6000",), generation="ampere"),
    DeviceCompute("rtx_6000_ada", {"bf16": 364.25, "fp8": 728.5}, 960, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/design-visualization/rtx-6000/ (RTX 6000 Ada Generation: "
                      "1,457 FP8 tensor TFLOPS with sparsity, 960 GB/s GDDR6, PCIe Gen4); BF16 at half the FP8 "
                      "rate"), aliases=("rtx_6000_ada_generation",), generation="ada"),
    DeviceCompute("rtx_3090", {"bf16": 142.0}, 936, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/ (RTX 3090: "
                      "285 tensor TFLOPS with sparsity, 936 GB/s GDDR6X, PCIe Gen4)"), "rtx_3090",
                  generation="ampere"),
    DeviceCompute("l4", {"bf16": 121.0, "fp8": 242.5}, 300, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/data-center/l4/ (BF16 242 / FP8 485 TFLOPS with sparsity, "
                      "300 GB/s, PCIe Gen4)"), "l4", generation="ada"),
    DeviceCompute("a30", {"bf16": 165.0}, 933, "pcie", PCIE4,
                  _nv("https://www.nvidia.com/en-us/data-center/products/a30-gpu/ (BF16 165 TFLOPS dense, 330 "
                      "with sparsity, 933 GB/s HBM2, PCIe Gen4; an NVLink bridge joins two cards)"),
                  generation="ampere"),
    DeviceCompute("t4", {"bf16": 65.0}, 320, "pcie", PCIE3,
                  _nv("https://www.nvidia.com/en-us/data-center/tesla-t4/ (mixed precision FP16/FP32 65 TFLOPS, "
                      "320 GB/s GDDR6, PCIe Gen3 x16); no BF16: the FP16 figure"), aliases=("tesla_t4",),
                  generation="turing"),
    DeviceCompute("v100", {"bf16": 125.0}, 900, "nvlink", 150,
                  _nv("https://www.nvidia.com/en-us/data-center/v100/ (V100 SXM2: 125 tensor TFLOPS, 900 GB/s "
                      "HBM2, NVLink 300 GB/s); no BF16: the FP16 tensor figure"),
                  aliases=("v100_sxm2", "v100_sxm2_32gb", "tesla_v100", "v100_32gb"), generation="volta"),
    DeviceCompute("v100_16gb", {"bf16": 125.0}, 900, "nvlink", 150,
                  _nv("https://www.nvidia.com/en-us/data-center/v100/ (V100 SXM2 16GB: 125 tensor TFLOPS, 900 GB/s "
                      "HBM2, NVLink 300 GB/s); no BF16: the FP16 tensor figure"), aliases=("v100_sxm2_16gb",),
                  generation="volta"),
    DeviceCompute("v100_pcie", {"bf16": 112.0}, 900, "pcie", PCIE3,
                  _nv("https://www.nvidia.com/en-us/data-center/v100/ (V100 PCIe: 112 tensor TFLOPS, 900 GB/s "
                      "HBM2, PCIe 32 GB/s both ways); no BF16: the FP16 tensor figure"),
                  aliases=("v100_pcie_32gb",), generation="volta"),
    DeviceCompute("mi300x", {"bf16": 1307.4, "fp8": 2614.9}, 5300, "xgmi", 448,
                  "AMD datasheet https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (BF16 1,307.4 "
                  "/ FP8 2,614.9 TFLOPS dense, 5.3 TB/s HBM3, 7 Infinity Fabric links of 128 GB/s)", "mi300x"),
    DeviceCompute("mi325x", {"bf16": 1307.4, "fp8": 2614.9}, 6000, "xgmi", 448,
                  "AMD datasheet https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html (BF16 1,307.4 "
                  "/ FP8 2,614.9 TFLOPS dense, 6 TB/s HBM3E, 7 Infinity Fabric links of 128 GB/s)"),
    DeviceCompute("mi355x", {"bf16": 2516.6, "fp8": 5033.2, "fp4": 10066.3}, 8000, "xgmi", 537.6,
                  "AMD datasheet https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html (BF16 2.5 / "
                  "FP8 5.0 / MXFP4 10.1 PFLOPS dense, 8 TB/s HBM3E, Infinity Fabric 1,075 GB/s)"),
    DeviceCompute("mi350x", {"bf16": 2306.9, "fp8": 4613.7, "fp4": 9227.5}, 8000, "xgmi", 537.6,
                  "AMD datasheet https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html (BF16 2.3 / "
                  "FP8 4.6 / MXFP4 9.2 PFLOPS dense, 8 TB/s HBM3E, Infinity Fabric 1,075 GB/s)"),
    DeviceCompute("tpu_v5e", {"bf16": 197.0, "fp8": 393.0}, 819, "ici", 200,
                  "Google Cloud https://cloud.google.com/tpu/docs/v5e (197 TFLOPS BF16, 393 TOPS INT8, 819 GB/s "
                  "HBM2, ICI 400 GB/s bidirectional per chip)", aliases=("v5e", "tpu_v5_lite", "v5litepod"),
                  generation="tpu"),
    DeviceCompute("tpu_v5p", {"bf16": 459.0, "fp8": 918.0}, 2765, "ici", 300,
                  "Google Cloud https://cloud.google.com/tpu/docs/v5p (459 TFLOPS BF16, 918 TOPS INT8, 2,765 GB/s "
                  "HBM2e, ICI 4,800 Gbps per chip)", aliases=("v5p",), generation="tpu"),
    DeviceCompute("trillium", {"bf16": 918.0, "fp8": 1836.0}, 1640, "ici", 224,
                  "Google Cloud https://cloud.google.com/tpu/docs/v6e (918 TFLOPS BF16, 1,836 TOPS INT8, 1,640 GB/s "
                  "HBM, ICI 3,584 Gbps per chip)", aliases=("tpu_v6e_(trillium)",)),
    DeviceCompute("ironwood", {"bf16": 2307.0, "fp8": 4614.0}, 7370, "ici", 600,
                  "Google Cloud https://docs.cloud.google.com/tpu/docs/tpu7x (TPU7x: 2,307 TFLOPs BF16 and 4,614 FP8 "
                  "peak per chip, 192 GiB HBM) and Google https://blog.google/products/google-cloud/ironwood-tpu-age-"
                  "of-inference/ (7.37 TB/s HBM per chip, ICI 1.2 TBps bidirectional)",
                  aliases=("tpu7x", "tpu_v7", "tpu_v7_(ironwood)")),
    DeviceCompute("ascend_950pr", {"fp8": 1000.0, "fp4": 2000.0}, 1600, "unifiedbus", 1000,
                  "Huawei's announcement at Huawei Connect 2025 (Eric Xu's keynote, 2025-09-18; no datasheet yet), as "
                  "reported at https://reportify.ai/social-media/721107923617455 (1 PFLOPS FP8, 2 PFLOPS FP4, 2 TB/s "
                  "interconnect) and https://www.medcom.id/teknologi/news-teknologi/akW27ydb-huawei-punya-hbm-buatan-"
                  "sendiri-targetkan-supercluster-raksasa (950PR: 128 GB HiBL 1.0 at 1.6 TB/s); no BF16 figure was "
                  "stated, so BF16 weights have no speed prediction"),
    DeviceCompute("arc_pro_b60", {"bf16": 98.3}, 456, "pcie", PCIE5 / 2,
                  "Intel Arc Pro B60 (BMG-G21, 160 XMX engines) as the spec listings give it: 98.3 TFLOPS BF16 and "
                  "196.6 TOPS INT8 on the XMX engines (https://hmc-tech.com/gpu/intel-arc-pro-b60-vs-nvidia-quadro-"
                  "p620), 24 GB GDDR6 on 192 bits at 456 GB/s, PCIe 5.0 x8 (https://technical.city/en/video/"
                  "Iris-Xe-Graphics-96EU-vs-Arc-Pro-B60); no Intel datasheet is stored here", brand="Intel"),
    DeviceCompute("arc_pro_b70", {"bf16": 183.5}, 608, "pcie", PCIE5,
                  "Intel Arc Pro B70 as https://zolotukhin.ai/blog/2026-05-18-intel-arc-pro-b70-deep-dive-and-zincs-"
                  "t-intel-plan/ gives Intel's figures: 256 XMX engines, 367 INT8 TOPS, 32 GB ECC GDDR6 on 256 bits at "
                  "608 GB/s, PCIe 5.0 x16; BF16 at half the INT8 rate, as the B60's XMX figures are (an assumption)",
                  brand="Intel"),
    DeviceCompute("dgx_spark_gb10", {"fp4": 500.0}, 273, "none", 0.0,
                  _nv("https://www.nvidia.com/en-us/products/workstations/dgx-spark/ (1 PFLOP FP4 with sparsity, "
                      "273 GB/s LPDDR5x)")),
)


LINK_BRAND = {"xgmi": "AMD", "ici": "Google", "unifiedbus": "Huawei"}
"""The vendor of a part by the link its devices talk over (NVIDIA's NVLink and PCIe cards otherwise)."""


def row_brand(row: DeviceCompute) -> str:
    """The vendor of a speed-table part: its ``brand``, else by its link (``LINK_BRAND``)."""
    return row.brand or LINK_BRAND.get(row.link, "NVIDIA")


def _normal(name: str) -> str:
    """An id as the table spells it: lower case, words joined by ``_`` (``H100-SXM`` is ``h100_sxm``)."""
    return re.sub(r"[\s-]+", "_", name.strip().lower())


def compute_row(*names: str) -> DeviceCompute | None:
    """The row whose id or alias equals one of ``names`` (a taxonomy id without its ``_Nx``
    suffix, a display name), first name first; None when none does."""
    for name in names:
        key = re.sub(r"_\d+x$", "", _normal(name))
        for row in DEVICE_COMPUTE:
            if key == row.id or key in row.aliases:
                return row
    return None


def compute_format(row: DeviceCompute, weights_format: str) -> str | None:
    """The format a part multiplies weights of ``weights_format`` in: its own when the part has
    a figure for it, else the next wider one it has (FP8 weights on an A100 run through BF16:
    vLLM's weight-only Marlin kernels); None when it has none."""
    fmt = weights_format if weights_format in FORMATS else "bf16"
    for candidate in (fmt, *WIDE_FORMATS[fmt]):
        if candidate in row.tflops:
            return candidate
    return None
