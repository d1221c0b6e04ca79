"""Accelerator requests by hardware brand: device-plugin resource names and node selectors.

Each entry is a fact from the device plugin's public documentation, kept with its source so it
can be checked again when a plugin renames a resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from servekit.hardware.lookup import profile_of
from servekit.hardware.profile import HardwareProfile


@dataclass(frozen=True)
class DevicePlugin:
    resource: str
    source: str
    note: str = ""


DEVICE_PLUGINS: dict[str, DevicePlugin] = {
    "nvidia": DevicePlugin(
        "nvidia.com/gpu", "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/"),
    "amd": DevicePlugin(
        "amd.com/gpu", "https://instinct.docs.amd.com/projects/k8s-device-plugin/en/latest/"),
    "intel_xe": DevicePlugin(
        "gpu.intel.com/xe",
        "https://intel.github.io/intel-device-plugins-for-kubernetes/cmd/gpu_plugin/README.html",
        "xe kernel driver (Arc Pro B-series); nodes on the legacy i915 driver expose gpu.intel.com/i915"),
    "intel_i915": DevicePlugin(
        "gpu.intel.com/i915",
        "https://intel.github.io/intel-device-plugins-for-kubernetes/cmd/gpu_plugin/README.html"),
    "npu": DevicePlugin(
        "huawei.com/Ascend910",
        "https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/mxdlug_005.html",
        "MindCluster Ascend Device Plugin, full-card mode; the name follows the chip family the plugin "
        "reports (e.g. huawei.com/Ascend910, huawei.com/Ascend310P): check `kubectl describe node`"),
    "qaic": DevicePlugin(
        "qualcomm.com/qaic", "https://docs.qualcomm.com/doc/80-99100-3/topic/production-serving-management.html",
        "Cloud AI 100 device plugin (cloud_ai_k8s_device_plugin); one resource per SoC (/dev/accel/accelN)"),
    "tpu": DevicePlugin(
        "google.com/tpu", "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"),
}

TPU_ACCELERATORS: dict[str, tuple[str, str]] = {
    "trillium": ("tpu-v6e-slice", "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"),
    "ironwood": ("tpu7x", "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood"),
}
"""Hardware profile -> value of the ``cloud.google.com/gke-tpu-accelerator`` node label."""

TPU_TOPOLOGIES: dict[tuple[str, int], str] = {
    ("tpu-v6e-slice", 1): "1x1", ("tpu-v6e-slice", 4): "2x2", ("tpu-v6e-slice", 8): "2x4",
    ("tpu7x", 4): "2x2x1",
}
"""(accelerator, chips on one host) -> ``cloud.google.com/gke-tpu-topology`` of a single-host slice."""
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"


@dataclass(frozen=True)
class DeviceRequest:
    """What one server container asks the scheduler for."""

    resources: Mapping[str, int] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def profile_field(profile: Any, name: str, default: Any = None) -> Any:
    """One field of a hardware profile, whether a taxonomy mapping or a typed profile object."""
    if isinstance(profile, Mapping):
        return profile.get(name, default)
    raw = getattr(profile, "raw", None)
    if isinstance(raw, Mapping) and name in raw:
        return raw[name]
    return getattr(profile, name, default)


PLATFORM_PLUGINS: dict[str, str | None] = {
    "cuda": "nvidia", "rocm": "amd", "xpu": "intel_xe", "tpu": "tpu", "ascend": "npu", "qaic": "qaic", "cpu": None,
}
"""The profile's platform -> key into ``DEVICE_PLUGINS`` (None: CPU-only hardware asks for no device)."""


def typed_profile(profile: Any) -> HardwareProfile:
    """The typed profile of a taxonomy mapping (or the typed profile itself)."""
    return profile if isinstance(profile, HardwareProfile) else profile_of(profile if isinstance(profile, Mapping) else None)


def device_kind(profile: Any) -> str | None:
    """Key into ``DEVICE_PLUGINS`` for this profile; None for CPU-only hardware."""
    return PLATFORM_PLUGINS.get(typed_profile(profile).platform, "nvidia")


def device_count(profile: Any) -> int:
    """Accelerators on one node: SoCs for Qualcomm Cloud AI, otherwise the devices of the node."""
    typed = typed_profile(profile)
    return (typed.socs.soc_count if typed.socs and typed.socs.soc_count else None) or typed.devices


def device_request(profile: Any, hardware_id: str, count: int, *, resource: str | None = None,
                   tpu_topology: str | None = None) -> DeviceRequest:
    """``count`` accelerators of this profile's brand, plus TPU node selectors."""
    kind = device_kind(profile)
    if kind is None or count <= 0:
        return DeviceRequest()
    plugin = DEVICE_PLUGINS[kind]
    name = resource or plugin.resource
    notes = (f"{name}: {plugin.note}",) if plugin.note and not resource else ()
    if kind != "tpu":
        return DeviceRequest({name: count}, {}, notes)
    accelerator, _ = TPU_ACCELERATORS.get(hardware_id, (None, ""))
    selector: dict[str, str] = {}
    if accelerator is None:
        notes += (f"no GKE accelerator label known for {hardware_id}; add {TPU_ACCELERATOR_LABEL} yourself",)
    else:
        selector[TPU_ACCELERATOR_LABEL] = accelerator
        topology = tpu_topology or TPU_TOPOLOGIES.get((accelerator, count))
        if topology:
            selector[TPU_TOPOLOGY_LABEL] = topology
        else:
            notes += (f"no single-host topology of {accelerator} has {count} chips; pass a TPU topology",)
    return DeviceRequest({name: count}, selector, notes)
