"""What one server container asks the scheduler for: its process's devices, under the device
plugin's resource name of the hardware (``HardwareProfile.device_plugin``), plus TPU node labels.

The count is the process's own parallel layout (``servekit.engines.vllm.layout``): TP x PP for
one replica, DP-local x TP for data-parallel ranks, the world split over ``--nnodes`` nodes. A
pod never asks for the whole node just because the node has more devices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from servekit.engines.vllm.layout import ParallelLayout, parallel_layout
from servekit.hardware.device_plugins import TPU_ACCELERATOR_LABEL, TPU_TOPOLOGY_LABEL
from servekit.hardware.lookup import profile_of
from servekit.hardware.profile import HardwareProfile
from servekit.records import record
from servekit.synthesis.plan import Process


@record
class DeviceRequest:
    """What one server container asks the scheduler for."""

    resources: Mapping[str, int] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def typed_profile(profile: Any, hw_id: str | None = None) -> HardwareProfile:
    """The typed profile of a taxonomy mapping (built with its id when given), or the typed profile itself."""
    if isinstance(profile, HardwareProfile):
        return profile
    return profile_of(profile if isinstance(profile, Mapping) else None, hw_id)


def process_layout(process: Process) -> ParallelLayout:
    """The parallel layout of one plan process (plans are written in vLLM's form for every engine)."""
    return parallel_layout([str(t) for t in process.argv()])


def process_devices(process: Process) -> int:
    """Devices one plan process drives on its node."""
    return process_layout(process).devices_per_node


def device_resource(profile: Any, override: str | None = None) -> str | None:
    """The resource name a server requests (None on CPU hardware)."""
    plugin = typed_profile(profile).device_plugin
    return None if plugin is None else (override or plugin.resource)


def host_device_selectors(profile: Any) -> tuple[str, ...]:
    """Environment variables that pick devices by host index on this hardware (the plugin picks in a pod)."""
    plugin = typed_profile(profile).device_plugin
    return plugin.selects_devices if plugin is not None else ()


def device_request(profile: Any, count: int, *, resource: str | None = None,
                   tpu_topology: str | None = None) -> DeviceRequest:
    """``count`` devices of this profile's plugin, plus TPU node selectors."""
    typed = typed_profile(profile)
    plugin = typed.device_plugin
    if plugin is None or count <= 0:
        return DeviceRequest()
    name = resource or plugin.resource
    notes = (f"{name}: {plugin.note}",) if plugin.note and not resource else ()
    if typed.platform != "tpu":
        return DeviceRequest({name: count}, {}, notes)
    if plugin.tpu is None:
        hw = typed.id or "this TPU"
        return DeviceRequest({name: count}, {}, notes + (
            f"no GKE accelerator label known for {hw}; add a {TPU_ACCELERATOR_LABEL} node selector yourself",))
    selector = {TPU_ACCELERATOR_LABEL: plugin.tpu.accelerator}
    topology = tpu_topology or plugin.tpu.topology_for(count)
    if topology:
        selector[TPU_TOPOLOGY_LABEL] = topology
    else:
        notes += (f"no single-host {plugin.tpu.accelerator} topology has {count} chips; pass a TPU topology",)
    return DeviceRequest({name: count}, selector, notes)
