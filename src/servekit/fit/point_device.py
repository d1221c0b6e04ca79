"""The device of a kv-points line, from its structured ``gpu`` name, ``gpu_mem_gib`` and env.

* A ``gpu`` name that starts with ``CPU``, or a ``VLLM_CPU_KVCACHE_SPACE`` in the launch's
  environment, is the vLLM CPU backend: its pool is that many GiB (``vllm-cpu`` memory rule).
* Otherwise the device is a GPU of ``gpu_mem_gib`` total memory; without it, the memory of the
  part the name names (``servekit.fit.gpu_models``), else 0 (no prediction from the memory
  model). The name also gives the platform (AMD parts run ROCm), the interconnect and, for
  NVIDIA parts, the generation (which formats run natively).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.fit.gpu_models import generation_from_name, interconnect_from_name, is_amd, memory_from_name
from servekit.fit.hardware import Device
from servekit.hardware import build_profile, custom_profile

__all__ = ["CPU_SPACE_ENV", "interconnect_from_name", "point_device"]

CPU_SPACE_ENV = "VLLM_CPU_KVCACHE_SPACE"


def _cpu_device(memory_gib: float) -> Device:
    raw = {"brand": "CPU", "kind": "cpu", "platform": "cpu", "gpu_count": 1, "vram_gb": memory_gib or 1.0}
    return Device(replace(build_profile("cpu", raw), memory_gib=memory_gib))


def point_device(point: dict[str, Any], env: dict[str, str], tp: int) -> tuple[Device, str, float | None]:
    """(device, engine, VLLM_CPU_KVCACHE_SPACE GiB or None) of one kv-points line."""
    name = str(point.get("gpu") or "")
    memory = float(point.get("gpu_mem_gib") or 0.0)
    space = env.get(CPU_SPACE_ENV)
    if name.upper().startswith("CPU") or space is not None:
        return _cpu_device(memory), "vllm-cpu", float(space) if space else None
    if not memory:
        memory = memory_from_name(name) or 0.0
    profile = custom_profile(memory, tp, brand="AMD" if is_amd(name) else "NVIDIA", generation=generation_from_name(name))
    profile = replace(profile, id=name.lower() or profile.id, interconnect=interconnect_from_name(name))
    return Device(profile), "vllm", None
