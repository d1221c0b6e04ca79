"""The device of a kv-points line, from its structured ``gpu_model``, ``gpu_mem_gib``,
``interconnect`` and environment (the ``gpu`` text is never read).

* ``gpu_model: cpu``, or a ``VLLM_CPU_KVCACHE_SPACE`` in the launch's environment, is the vLLM
  CPU backend: its pool is that many GiB (``vllm-cpu`` memory rule).
* Otherwise the device is a GPU of ``gpu_mem_gib`` total memory; without it, the memory the
  device table gives for ``gpu_model``, else, for a GPU known by its datasheet size only, that
  size priced by the assumed-memory rule (``servekit.hardware.device_memory.part_memory``; the
  profile's ``memory_source`` says which), else 0 (no prediction from the memory model). The id
  also gives the vendor (AMD parts run ROCm), the NVIDIA generation and the node's usual link
  (``servekit.fit.gpu_models``); ``interconnect`` states another link. A line without
  ``gpu_model`` is an NVIDIA GPU of unknown generation on PCIe.
* A ``gpu_model`` naming a TPU chip (``trillium``, ``tpu_v5e``) is a TPU of the table's HBM
  limit, sized by vLLM's TPU memory rule (no profiling pass).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.fit.gpu_models import gpu_part
from servekit.fit.hardware import Device
from servekit.fit.point_fields import CPU_MODEL
from servekit.hardware import build_profile, custom_profile
from servekit.hardware.device_compute import compute_row
from servekit.hardware.device_memory import memory_row, part_memory

__all__ = ["CPU_SPACE_ENV", "point_device"]

CPU_SPACE_ENV = "VLLM_CPU_KVCACHE_SPACE"


def _cpu_device(memory_gib: float) -> Device:
    raw = {"brand": "CPU", "kind": "cpu", "platform": "cpu", "gpu_count": 1, "vram_gb": memory_gib or 1.0}
    return Device(replace(build_profile("cpu", raw), memory_gib=memory_gib))


def _tpu(model: str) -> bool:
    """Whether ``gpu_model`` names a TPU chip: its device-table row is Google's, or its speed row's
    generation is ``tpu``."""
    row = memory_row(model)
    if row is not None:
        return row.brand == "Google"
    speed = compute_row(model)
    return speed is not None and (speed.generation == "tpu" or speed.link == "ici")


def point_device(point: dict[str, Any], env: dict[str, str], tp: int) -> tuple[Device, str, float | None]:
    """(device, engine, VLLM_CPU_KVCACHE_SPACE GiB or None) of one kv-points line."""
    model = point.get("gpu_model")
    memory = float(point.get("gpu_mem_gib") or 0.0)
    space = env.get(CPU_SPACE_ENV)
    if model == CPU_MODEL or space is not None:
        return _cpu_device(memory), "vllm-cpu", float(space) if space else None
    part = gpu_part(model) if model else None
    source = "stated: gpu_mem_gib" if memory else ""
    if not memory and model:
        memory, source = part_memory(model, model, part is not None and part.brand == "AMD")
    if part is None and model and _tpu(model):
        profile = custom_profile(memory, tp, brand="Google", generation="tpu")  # vLLM's TPU memory rule
        profile = replace(profile, id=model, interconnect=point.get("interconnect") or "ici", memory_source=source)
        return Device(profile), "vllm", None
    profile = custom_profile(memory, tp, brand=part.brand if part else "NVIDIA",
                             generation=part.generation if part else "")
    link = point.get("interconnect") or (part.interconnect if part else "pcie")
    profile = replace(profile, id=model or profile.id, interconnect=link, memory_source=source)
    return Device(profile), "vllm", None
