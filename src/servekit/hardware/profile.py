"""One typed profile per taxonomy hardware entry: every fact about a device, in one place.

A taxonomy entry (``taxonomy.yaml`` ``hardware_profiles.<id>``) states some facts; the rest are
derived here, one small function per fact, each saying where the fact comes from. servekit's
bundled taxonomy states every fact (``kind``, ``platform``, ``compute_target``, ``precisions``,
``interconnect``); a catalog that lacks those keys gets the derivations, which reproduce the
facts the bundled taxonomy states.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field, replace
from typing import Any

from servekit.hardware.container import ContainerDevices, container_devices
from servekit.hardware.device_plugins import DevicePlugin, derive_device_plugin
from servekit.hardware.device_compute import DeviceCompute, compute_row
from servekit.hardware.device_memory import assumed_gib, assumed_note, measured_memory, nominal_gb_of, part_ecc
from servekit.hardware.precision import derive_precisions
from servekit.records import record


KINDS = ("gpu", "cpu", "npu", "tpu", "accelerator")
PLATFORMS = ("cuda", "rocm", "xpu", "cpu", "tpu", "ascend", "qaic")
PLATFORM_KIND = {"cpu": "cpu", "tpu": "tpu", "ascend": "npu", "qaic": "accelerator"}
"""Kind of device each platform drives; the rest are GPUs."""
IMAGE_KEYS = {"cuda": "nvidia", "rocm": "amd", "xpu": "intel", "cpu": "intel", "tpu": "tpu",
              "ascend": "npu", "qaic": "qaic"}
"""Key of a brand-keyed ``docker_image`` map (and of the default images) per platform."""
TARGET_APIS = {"cuda": "cuda", "rocm": "hip"}
"""Compute-target API per platform: ``cuda:sm_90``, ``hip:gfx942``."""

CPU_ARCHES = ("x86_64", "aarch64")
ARM_BRANDS = ("arm", "ampere", "aws", "fujitsu", "huawei kunpeng", "nvidia grace")
"""Brands of Arm server CPUs (Neoverse licensees), lower case."""

NVIDIA_ORDER = ("ampere", "ada", "hopper", "blackwell")
GENERATION_TARGETS = {"ampere": "cuda:sm_80", "ada": "cuda:sm_89", "hopper": "cuda:sm_90"}
"""Compute target of every device of a generation that has only one."""
DEVICE_TARGETS = {
    "b200": "cuda:sm_100", "gb200": "cuda:sm_100",
    "b300": "cuda:sm_103", "gb300": "cuda:sm_103", "dgx_station_gb300": "cuda:sm_103",
    "rtx_5090": "cuda:sm_120", "rtx_pro_6000": "cuda:sm_120", "rtx_pro_5000": "cuda:sm_120",
    "dgx_spark_gb10": "cuda:sm_121",
    "mi300x": "hip:gfx942", "mi325x": "hip:gfx942", "mi350x": "hip:gfx950", "mi355x": "hip:gfx950",
}
"""Compute targets of devices whose generation spans several (Blackwell: datacenter sm_100,
Ultra sm_103, GeForce and RTX PRO sm_120, GB10 sm_121; AMD CDNA 3 gfx942, CDNA 4 gfx950),
keyed by device model: a profile id without its card-count suffix (``_2x``), or its display name."""
NVL4_WORD = "NVL4"
"""A display name naming an NVL4 tray (one GB200/GB300 tray of an NVL72 rack)."""


@record
class SocLayout:
    """How a Cloud AI 100 node is built from SoCs (each SoC is one device, addressed by its QID)."""

    soc_count: int | None = None
    socs_per_card: int | None = None
    cards_per_node: int | None = None
    nsp_cores_per_soc: int | None = None
    memory_gb_per_soc: float | None = None


@record
class HardwareProfile:
    """One node of accelerators, as servekit reasons about it."""

    id: str
    kind: str
    """gpu | cpu | npu | tpu | accelerator (a card such as Qualcomm Cloud AI 100)."""
    platform: str
    """Software stack that drives the device: cuda | rocm | xpu | cpu | tpu | ascend | qaic."""
    brand: str
    generations: tuple[str, ...]
    display_name: str
    device_count: int | None
    """Devices in one node as the taxonomy states it (GPUs, TPU chips, NPUs, NUMA nodes, SoCs)."""
    node_memory_gb: float
    """Device memory of the node, GB; 0.0 when unknown."""
    memory_gb: float
    """Nominal memory of one device, GB."""
    memory_gib: float
    """Memory of one device as the engine sees it (``torch.cuda.mem_get_info``'s total), GiB."""
    compute_arch: str | None
    """The taxonomy's ``compute_arch``: what ``arch:<compute_arch>`` selectors match."""
    compute_target: str | None
    """API:ARCH compile target (``cuda:sm_90``, ``hip:gfx942``); None where unknown or not a GPU."""
    interconnect: str | None
    """nvl4 | nvlink | xgmi | pcie | ...; None when unknown."""
    precisions: frozenset[str] | None
    """Gated number formats run natively (see ``servekit.hardware.precision``); None: not stated."""
    restricted: bool
    scalable: bool
    multi_node: bool
    socs: SocLayout | None
    container: ContainerDevices
    device_plugin: DevicePlugin | None
    """The Kubernetes device plugin's resource for one device (None: CPU hardware asks for none)."""
    memory_source: str = ""
    """Where ``memory_gib`` comes from: the device table's log (``measured: ...``), or
    ``assumed: ...`` when no log of the part is in the table."""
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The taxonomy entry as written (output that copies the taxonomy reads this)."""
    cpu_arch: str | None = None
    """x86_64 | aarch64 for a CPU platform (vLLM publishes a CPU wheel and image per
    architecture); None for accelerators."""
    compute: DeviceCompute | None = None
    """Speed facts of one device (``servekit.hardware.device_compute``); None: no row names it."""

    @property
    def generation(self) -> str | None:
        """The first generation (consumer entries may list several)."""
        return self.generations[0] if self.generations else None

    @property
    def devices(self) -> int:
        return self.device_count or 1

    @property
    def image_key(self) -> str:
        return IMAGE_KEYS.get(self.platform, "nvidia")

    @property
    def nvl4(self) -> bool:
        return self.interconnect == "nvl4"

    def at_least(self, generation: str) -> bool:
        """NVIDIA generation ordering (ampere < ada < hopper < blackwell)."""
        gen = (self.generation or "").lower()
        if self.brand.lower() != "nvidia" or gen not in NVIDIA_ORDER:
            return False
        return NVIDIA_ORDER.index(gen) >= NVIDIA_ORDER.index(generation)


# ── derivations: one per fact ────────────────────────────────────────────────────────────


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) and value else None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def derive_generations(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """``generation`` (or the older ``gpu_generation``): one string, or a list for consumer entries."""
    gen = raw.get("generation") or raw.get("gpu_generation")
    if isinstance(gen, list):
        return tuple(g for g in gen if isinstance(g, str))
    return (gen,) if isinstance(gen, str) else ()


def derive_platform(raw: Mapping[str, Any], brand: str, generations: tuple[str, ...]) -> str:
    """``platform``, else from generation and brand: tpu; AMD is ROCm; Intel CPU and XPU; Ascend
    NPUs (generation ``npu`` or Huawei); Cloud AI (generation ``qaic``, Qualcomm, or an entry
    with ``nsp_cores_per_soc``); else CUDA."""
    stated = _text(raw, "platform")
    if stated in PLATFORMS:
        return stated
    gen, vendor = (generations[0].lower() if generations else ""), brand.lower()
    if gen == "tpu":
        return "tpu"
    if vendor == "amd":
        return "rocm"
    if gen == "xpu":
        return "xpu"
    if gen == "cpu" or vendor == "intel":
        return "cpu"
    if gen == "npu" or vendor == "huawei":
        return "ascend"
    if gen == "qaic" or vendor == "qualcomm" or "nsp_cores_per_soc" in raw:
        return "qaic"
    return "cuda"


def derive_kind(raw: Mapping[str, Any], platform: str) -> str:
    """``kind``, else the kind of device the platform drives."""
    stated = _text(raw, "kind")
    return stated if stated in KINDS else PLATFORM_KIND.get(platform, "gpu")


def device_model_names(hw_id: str, raw: Mapping[str, Any]) -> tuple[str, ...]:
    """Names a device model is known by: ``device_model`` where the entry states one, the id
    without a card-count suffix, the display name."""
    stated = _text(raw, "device_model")
    names = [stated] if stated else []
    names += [re.sub(r"_\d+x$", "", hw_id)] if hw_id else []
    display = _text(raw, "display_name")
    if display:
        names.append(re.sub(r"\s+", "_", display.strip().lower()))
    return tuple(names)


def derive_compute_target(raw: Mapping[str, Any], hw_id: str, platform: str,
                          generations: tuple[str, ...]) -> str | None:
    """``compute_target``, else the device model's (``DEVICE_TARGETS``), else its generation's;
    only CUDA and ROCm devices have one."""
    stated = _text(raw, "compute_target")
    if stated:
        return stated
    if platform not in TARGET_APIS:
        return None
    for name in device_model_names(hw_id, raw):
        if name in DEVICE_TARGETS:
            return DEVICE_TARGETS[name]
    return GENERATION_TARGETS.get(generations[0].lower()) if generations else None


def derive_interconnect(raw: Mapping[str, Any]) -> str | None:
    """``interconnect``, else ``nvl4`` for a display name that names an NVL4 tray; else unknown."""
    stated = _text(raw, "interconnect")
    if stated:
        return stated
    display = _text(raw, "display_name") or ""
    return "nvl4" if NVL4_WORD in display.split() else None


def derive_precisions_of(raw: Mapping[str, Any], platform: str, brand: str, generations: tuple[str, ...],
                         compute_target: str | None) -> frozenset[str] | None:
    """``precisions``, else derived (``servekit.hardware.precision.derive_precisions``)."""
    stated = raw.get("precisions")
    if isinstance(stated, list):
        return frozenset(p for p in stated if isinstance(p, str))
    return derive_precisions(platform, brand, generations, compute_target)


def device_memory_gb(node_memory_gb: float, devices: int) -> float:
    """Nominal memory of one device: the node's memory shared evenly."""
    return node_memory_gb / devices


def usable_gib(node_memory_gb: float, devices: int) -> float:
    """Memory of one device assumed from its nominal GB (``assumed_gib``), GiB."""
    return assumed_gib(node_memory_gb / devices)


MEASURED_PLATFORMS = ("cuda", "rocm", "tpu")
"""Platforms whose devices the device table measures (GPUs, and TPU chips by their HBM limit)."""
MEASURED_SPAN = (0.85, 1.0)
"""A table row applies to a profile only when its measured GiB lie within this share of the
profile's nominal GB per device: a row of another memory variant of the same name (an H100 NVL's
94 GB against an 80 GB H100 row) is not taken. An assumption: every measured row lies within it
(L40S 0.925, A10 0.92, H100 0.99, MI300X 1.0)."""


def derive_device_memory(hw_id: str, raw: Mapping[str, Any], platform: str, brand: str,
                         memory_gb: float, compute: DeviceCompute | None = None) -> tuple[float, str]:
    """(GiB the engine sees on one device, where the figure comes from): the device table's row for
    the GPU model (``servekit.hardware.device_memory``), else assumed from the nominal size (less
    ECC's share where the part's datasheet row, by its speed row ``compute``, says ECC is on)."""
    if platform in MEASURED_PLATFORMS and memory_gb:
        display = _text(raw, "display_name") or ""
        for name in (display, re.sub(r"_\d+x$", "", hw_id).replace("_", " ")):
            row = measured_memory(re.sub(r"\s+\d+x$", "", name)) if name else None
            if row and MEASURED_SPAN[0] <= row.memory_gib / memory_gb <= MEASURED_SPAN[1]:
                return row.memory_gib, f"measured: {row.source}"
    amd, ecc = brand.lower() == "amd", part_ecc(compute.id) if compute else False
    return assumed_gib(memory_gb, amd, ecc), assumed_note(memory_gb, amd, ecc)


def derive_socs(raw: Mapping[str, Any], platform: str) -> SocLayout | None:
    """The SoC layout keys (Cloud AI 100); present on a QAIC profile even when it states none."""
    keys = ("soc_count", "socs_per_card", "cards_per_node", "nsp_cores_per_soc")
    if platform != "qaic" and not any(k in raw for k in (*keys, "memory_gb_per_soc")):
        return None
    ints = {k: _positive_int(raw.get(k)) for k in keys}
    return SocLayout(**ints, memory_gb_per_soc=_number(raw.get("memory_gb_per_soc")))


def derive_cpu_arch(raw: Mapping[str, Any], platform: str, brand: str) -> str | None:
    """``cpu_arch`` (x86_64 or aarch64), else from the brand: Intel and AMD build x86_64 CPUs,
    the Arm licensees (``ARM_BRANDS``) aarch64; only a CPU platform has one."""
    if platform != "cpu":
        return None
    stated = _text(raw, "cpu_arch")
    if stated in CPU_ARCHES:
        return stated
    return "aarch64" if brand.lower() in ARM_BRANDS else "x86_64"


def container_device_count(device_count: int | None, socs: SocLayout | None) -> int:
    """Device nodes a container needs: one per SoC on Cloud AI 100, else one per device."""
    return (socs.soc_count if socs else None) or device_count or 1


# ── building ─────────────────────────────────────────────────────────────────────────────


def build_profile(hw_id: str, raw: Mapping[str, Any]) -> HardwareProfile:
    """The typed profile of one taxonomy entry (missing facts derived, bad values ignored)."""
    brand = _text(raw, "brand") or ""
    generations = derive_generations(raw)
    platform = derive_platform(raw, brand, generations)
    device_count = _positive_int(raw.get("gpu_count"))
    node_memory = _number(raw.get("vram_gb")) or 0.0
    target = derive_compute_target(raw, hw_id, platform, generations)
    socs = derive_socs(raw, platform)
    memory_gb = device_memory_gb(node_memory, device_count or 1)
    compute = compute_row(*device_model_names(hw_id, raw))
    memory_gib, memory_source = derive_device_memory(hw_id, raw, platform, brand, memory_gb, compute)
    return HardwareProfile(
        id=hw_id,
        kind=derive_kind(raw, platform),
        platform=platform,
        brand=brand,
        generations=generations,
        display_name=_text(raw, "display_name") or hw_id,
        device_count=device_count,
        node_memory_gb=node_memory,
        memory_gb=memory_gb,
        memory_gib=memory_gib,
        compute_arch=_text(raw, "compute_arch"),
        compute_target=target,
        interconnect=derive_interconnect(raw),
        precisions=derive_precisions_of(raw, platform, brand, generations, target),
        restricted=bool(raw.get("restricted")),
        scalable=raw.get("scalable") is not False,
        multi_node=bool(raw.get("multi_node")),
        socs=socs,
        container=container_devices(platform, container_device_count(device_count, socs)),
        device_plugin=derive_device_plugin(device_model_names(hw_id, raw), platform),
        memory_source=memory_source,
        raw=raw,
        cpu_arch=derive_cpu_arch(raw, platform, brand),
        compute=compute,
    )


def custom_profile(memory_gib: float, devices: int = 1, *, brand: str = "NVIDIA", generation: str = "",
                   hw_id: str = "custom") -> HardwareProfile:
    """An ad-hoc device known only by its usable memory (GiB) and count, e.g. from a measurement."""
    raw = {"brand": brand, "generation": generation, "gpu_count": devices,
           "vram_gb": nominal_gb_of(memory_gib) * devices}
    return replace(build_profile(hw_id, raw), memory_gib=memory_gib, memory_gb=nominal_gb_of(memory_gib),
                   memory_source="stated")
