"""Give an older vLLM release the CPU platform when it is imported from its unpacked wheel.

From 0.33 vLLM takes ``VLLM_TARGET_DEVICE=cpu`` as the platform; earlier releases detect CPU only
from a ``+cpu`` in the installed version (vllm/platforms/__init__.py, ``cpu_platform_plugin``), so a
GPU wheel imported on a machine without a GPU finds no platform and its config defaults fail
("Failed to infer device type"). Setting the platform module's current platform to its own
``CpuPlatform`` first is what a ``+cpu`` build would have chosen. Standard library only: it runs in
the engine's environment.
"""

from __future__ import annotations

import importlib
import os


def pin_cpu_platform() -> None:
    """With VLLM_TARGET_DEVICE=cpu, make vLLM's current platform its CpuPlatform when it detects none."""
    if os.environ.get("VLLM_TARGET_DEVICE") != "cpu":
        return
    platforms = importlib.import_module("vllm.platforms")
    detect = getattr(platforms, "cpu_platform_plugin", None)
    if detect is None or detect() is not None:
        return  # this release finds the CPU platform itself
    cpu = importlib.import_module("vllm.platforms.cpu").CpuPlatform
    if not isinstance(getattr(platforms, "_current_platform", None), cpu):
        platforms._current_platform = cpu()
