"""What a kv-points ``gpu_model`` id says about the part besides its memory: its vendor (the
platform vLLM ran on), its NVIDIA generation (which number formats it computes natively,
``servekit.hardware.precision``) and how a node of such parts is usually linked.

``GPU_PARTS``: a row for each of the device table's first ids (``servekit.hardware.device_memory``,
which gives the memory vLLM sees); a GPU name in free text is never read. Generations follow the chip each product is
built on (NVIDIA's product pages: Ampere GA100/GA102, Ada AD102, Hopper GH100, Blackwell GB202);
links: SXM data-centre boards are joined by NVLink/NVSwitch, AMD Instinct parts by xGMI, cards
without a switch by PCIe. A node of another form (an H100 PCIe server) states ``interconnect``.

Any other GPU of the device speed table with a datasheet size
(``servekit.hardware.device_memory.NOMINAL_MEMORY``) is a ``gpu_model`` too, its vendor, NVIDIA
generation and usual link that table's. One with a measured memory row (a B200, an A30) takes that
memory; one without (a GB200, an A40, a T4), unless the line states ``gpu_mem_gib``, its datasheet
size priced by the assumed-memory rule, which the prediction names among its assumptions
(``servekit.fit.point_device``).
"""

from __future__ import annotations

from servekit.hardware.device_compute import DEVICE_COMPUTE, DeviceCompute, row_brand
from servekit.hardware.device_memory import DEVICE_MEMORY, nominal_row
from servekit.records import record


@record
class GpuPart:
    id: str
    brand: str
    generation: str
    """NVIDIA generation (ampere, ada, hopper, blackwell); "" for AMD parts."""
    interconnect: str
    """nvlink | pcie | xgmi: the usual link of a node of these parts."""
    source: str


GPU_PARTS: tuple[GpuPart, ...] = (
    GpuPart("h200", "NVIDIA", "hopper", "nvlink", "NVIDIA H200 Tensor Core GPU: GH100, SXM5 boards with NVLink 4"),
    GpuPart("h100", "NVIDIA", "hopper", "nvlink",
            "NVIDIA H100 Tensor Core GPU: GH100; the 80GB HBM3 part is the SXM5 board (NVLink 4)"),
    GpuPart("a100_40gb", "NVIDIA", "ampere", "nvlink", "NVIDIA A100 Tensor Core GPU: GA100, A100-SXM4-40GB (NVLink 3)"),
    GpuPart("a100_80gb", "NVIDIA", "ampere", "nvlink", "NVIDIA A100 Tensor Core GPU: GA100, SXM4 80GB (NVLink 3)"),
    GpuPart("l40s", "NVIDIA", "ada", "pcie", "NVIDIA L40S: AD102, a PCIe card without NVLink"),
    GpuPart("a10", "NVIDIA", "ampere", "pcie", "NVIDIA A10: GA102, a PCIe card"),
    GpuPart("l40", "NVIDIA", "ada", "pcie", "NVIDIA L40: AD102, a PCIe card without NVLink"),
    GpuPart("l4", "NVIDIA", "ada", "pcie", "NVIDIA L4: AD104, a low-profile PCIe card"),
    GpuPart("rtx_3090", "NVIDIA", "ampere", "pcie", "GeForce RTX 3090: GA102, PCIe"),
    GpuPart("rtx_5090", "NVIDIA", "blackwell", "pcie", "GeForce RTX 5090: GB202, PCIe without NVLink"),
    GpuPart("rtx_pro_6000", "NVIDIA", "blackwell", "pcie", "NVIDIA RTX PRO 6000 Blackwell: GB202, PCIe without NVLink"),
    GpuPart("mi300x", "AMD", "", "xgmi", "AMD Instinct MI300X: CDNA 3, Infinity Fabric (xGMI) links"),
)

POINT_LINKS = ("nvlink", "pcie", "xgmi")
"""Links of the GPU nodes a kv-points line describes (``servekit.fit.point_fields.INTERCONNECTS``)."""


def _datasheet_part(row: DeviceCompute) -> GpuPart | None:
    """A GPU of the speed table known by its datasheet size only, as a ``GpuPart``; None for a part
    of another kind (TPU, Ascend, a unified-memory box), one without a nominal size, or an NVIDIA
    part of unstated generation."""
    if row.link not in POINT_LINKS or row.memory_id or nominal_row(row.id) is None:
        return None
    brand = row_brand(row)
    if brand == "NVIDIA" and not row.generation:
        return None
    return GpuPart(row.id, brand, row.generation if brand == "NVIDIA" else "", row.link,
                   f"the device speed table's row ({row.source})")


_BY_ID = {part.id: part for part in GPU_PARTS}
_BY_ID.update({part.id: part for part in map(_datasheet_part, DEVICE_COMPUTE) if part and part.id not in _BY_ID})
GPU_MODEL_IDS: tuple[str, ...] = (*(row.id for row in DEVICE_MEMORY),
                                  *(pid for pid in _BY_ID if pid not in {row.id for row in DEVICE_MEMORY}))
"""Every ``gpu_model`` id a kv-points line may name: the device memory table's rows first, then the
GPUs known by their datasheet size."""


def gpu_part(device_id: str) -> GpuPart | None:
    """The row of a ``gpu_model`` id; None for an id without one."""
    return _BY_ID.get(device_id)
