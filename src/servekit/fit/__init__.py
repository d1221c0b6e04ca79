"""Fit: per-rank memory, KV pool by layer kind, and "can it start" checks.

The names below are imported on first use: a plan's fit check needs ``servekit.fit.api``, not the
kv-points reader (``servekit.fit.points``) or the rest of the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servekit.findings import Finding
    from servekit.fit.api import FitCheck, check_plan_fit
    from servekit.fit.hardware import Device, custom_device, device_from_profile
    from servekit.fit.launch import LaunchSettings, launch_settings
    from servekit.fit.planner import FitReport, FitRequest, plan_fit
    from servekit.fit.points import predict_point

_LAZY = {
    "Device": "servekit.fit.hardware",
    "FitCheck": "servekit.fit.api",
    "FitReport": "servekit.fit.planner",
    "FitRequest": "servekit.fit.planner",
    "Finding": "servekit.findings",
    "LaunchSettings": "servekit.fit.launch",
    "check_plan_fit": "servekit.fit.api",
    "custom_device": "servekit.fit.hardware",
    "device_from_profile": "servekit.fit.hardware",
    "launch_settings": "servekit.fit.launch",
    "plan_fit": "servekit.fit.planner",
    "predict_point": "servekit.fit.points",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'servekit.fit' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
