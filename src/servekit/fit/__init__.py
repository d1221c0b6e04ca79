"""Fit: per-rank memory, KV pool by layer kind, and "can it start" checks."""

from servekit.findings import Finding
from servekit.fit.api import FitCheck, check_plan_fit
from servekit.fit.hardware import Device, custom_device, device_from_profile
from servekit.fit.launch import LaunchSettings, launch_settings
from servekit.fit.planner import FitReport, FitRequest, plan_fit
from servekit.fit.points import predict_point

__all__ = [
    "Device",
    "FitCheck",
    "FitReport",
    "FitRequest",
    "Finding",
    "LaunchSettings",
    "check_plan_fit",
    "custom_device",
    "device_from_profile",
    "launch_settings",
    "plan_fit",
    "predict_point",
]
