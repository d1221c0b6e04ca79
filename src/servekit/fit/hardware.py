"""Per-device memory and capability from a catalog hardware profile (taxonomy.yaml).

A profile gives the node's ``vram_gb`` and ``gpu_count``; one device has ``vram_gb / gpu_count``
nominal GB, of which drivers leave a little less usable (``USABLE_FRACTION``: a 32 GB RTX 5090
reports 31.4 GiB, an 80 GB H100 79.2 GiB, a 24 GB RTX 3090 23.6 GiB).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from servekit.errors import ServekitError

USABLE_FRACTION = 31.4 / 32

_DEVICE_KIND = {"cpu": "cpu", "npu": "npu", "xpu": "xpu", "tpu": "tpu"}
_NVIDIA_ORDER = ("ampere", "ada", "hopper", "blackwell")


@dataclass(frozen=True)
class Device:
    name: str
    brand: str
    generation: str
    count: int
    memory_gib: float
    """Usable memory of one device, GiB."""
    kind: str = "gpu"
    """gpu | cpu | npu | xpu | tpu"""

    def at_least(self, generation: str) -> bool:
        """NVIDIA generation ordering (ampere < ada < hopper < blackwell)."""
        if self.brand.lower() != "nvidia" or self.generation not in _NVIDIA_ORDER:
            return False
        return _NVIDIA_ORDER.index(self.generation) >= _NVIDIA_ORDER.index(generation)


class HardwareError(ServekitError):
    """A hardware profile lacks what planning needs."""


def device_from_profile(name: str, profile: Mapping[str, Any]) -> Device:
    try:
        count = int(profile.get("gpu_count") or 1)
        vram = float(profile["vram_gb"])
    except (KeyError, TypeError, ValueError):
        raise HardwareError(
            f"hardware profile {name!r} has no usable vram_gb / gpu_count",
            fix="add vram_gb and gpu_count to its entry in taxonomy.yaml",
        ) from None
    generation = str(profile.get("generation") or "").lower()
    return Device(
        name=name,
        brand=str(profile.get("brand") or ""),
        generation=generation,
        count=count,
        memory_gib=round(vram / count * USABLE_FRACTION, 3),
        kind=_DEVICE_KIND.get(generation, "gpu"),
    )


def custom_device(memory_gib: float, count: int = 1, *, brand: str = "NVIDIA", generation: str = "") -> Device:
    return Device(name="custom", brand=brand, generation=generation, count=count, memory_gib=memory_gib)
