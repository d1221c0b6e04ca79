"""The devices fit plans for: a view of a hardware profile (``servekit.hardware``).

A taxonomy profile gives the node's ``vram_gb`` and ``gpu_count``; one device has ``vram_gb /
gpu_count`` nominal GB, of which drivers leave a little less usable (``servekit.hardware.device_memory``).
"""

from __future__ import annotations

from typing import Any, Mapping

from servekit.errors import ServekitError
from servekit.hardware import HardwareProfile, build_profile, custom_profile
from servekit.records import record

__all__ = ["Device", "HardwareError", "custom_device", "device_from_profile"]


@record
class Device:
    """One node's devices as fit sees them."""

    profile: HardwareProfile

    @property
    def name(self) -> str:
        return self.profile.id

    @property
    def brand(self) -> str:
        return self.profile.brand

    @property
    def generation(self) -> str:
        return (self.profile.generation or "").lower()

    @property
    def count(self) -> int:
        return self.profile.devices

    @property
    def memory_gib(self) -> float:
        """Usable memory of one device, GiB."""
        return self.profile.memory_gib

    @property
    def kind(self) -> str:
        """gpu | cpu | npu | tpu | accelerator"""
        return self.profile.kind

    def at_least(self, generation: str) -> bool:
        """NVIDIA generation ordering (ampere < ada < hopper < blackwell)."""
        return self.profile.at_least(generation)


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
    return Device(build_profile(name, {**profile, "gpu_count": count, "vram_gb": vram}))


def custom_device(memory_gib: float, count: int = 1, *, brand: str = "NVIDIA", generation: str = "") -> Device:
    return Device(custom_profile(memory_gib, count, brand=brand, generation=generation))
