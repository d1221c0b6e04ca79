"""The device of a kv-points line, from its structured ``gpu`` name, ``gpu_mem_gib`` and env.

* A ``gpu`` name that starts with ``CPU``, or a ``VLLM_CPU_KVCACHE_SPACE`` in the launch's
  environment, is the vLLM CPU backend: its pool is that many GiB (``vllm-cpu`` memory rule).
* Otherwise the device is a GPU of ``gpu_mem_gib`` total memory (0 when not stated: no
  prediction from the memory model). Its interconnect is read from the name: NVLink/NVSwitch
  data-centre parts of Hopper and later (H100, H200, H800, B200, B300, GB200, GB300) and AMD
  MI300-class parts (xGMI) keep large communication buffers; a name with ``PCIe`` or any other
  part counts as PCIe (a stated assumption, see ``comm_nvswitch_gib`` in the constants table).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from servekit.fit.hardware import Device
from servekit.hardware import build_profile, custom_profile

_SWITCHED = re.compile(r"\b(?:G?[HB][1-3]00|H800|MI3\d\dX?)\b", re.IGNORECASE)
CPU_SPACE_ENV = "VLLM_CPU_KVCACHE_SPACE"


def interconnect_from_name(name: str) -> str:
    if "pcie" in name.lower() or not _SWITCHED.search(name):
        return "pcie"
    return "xgmi" if "mi3" in name.lower() else "nvlink"


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
    profile = custom_profile(memory, tp)
    profile = replace(profile, id=name.lower() or profile.id, interconnect=interconnect_from_name(name))
    return Device(profile), "vllm", None
