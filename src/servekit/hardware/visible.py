"""The environment variable that selects which devices of a node a server sees, per platform.

vLLM reads one variable per platform (``Platform.device_control_env_var``): CUDA and ROCm both
``CUDA_VISIBLE_DEVICES`` (vllm/platforms/cuda.py; vllm/platforms/rocm.py: "rocm shares the same
device control env var as CUDA"), Intel XPU ``ZE_AFFINITY_MASK`` (vllm/platforms/xpu.py), Ascend
``ASCEND_RT_VISIBLE_DEVICES`` (vllm-ascend's vllm_ascend/platform.py). Each holds a comma-separated
list of device ids; a server sees exactly the devices listed.
"""

from __future__ import annotations

import re

VISIBLE_DEVICES_ENV = {
    "cuda": "CUDA_VISIBLE_DEVICES",
    "rocm": "CUDA_VISIBLE_DEVICES",
    "xpu": "ZE_AFFINITY_MASK",
    "ascend": "ASCEND_RT_VISIBLE_DEVICES",
}
_ID = re.compile(r"[0-9]+(\.[0-9]+)?")


def visible_devices_env(platform: str) -> str | None:
    """The variable that selects devices on ``platform`` (None where vLLM reads none)."""
    return VISIBLE_DEVICES_ENV.get(platform)


def listed_devices(value: str) -> int | None:
    """How many devices a literal list (``0,1,2,3``; XPU ``0.0,1.0``) names; None for a value
    the shell fills in or one that is not a list of ids."""
    parts = [p.strip() for p in value.split(",")]
    if not value.strip() or not all(_ID.fullmatch(p) for p in parts):
        return None
    return len(set(parts))
