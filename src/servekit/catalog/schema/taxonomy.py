"""taxonomy.yaml (hardware profiles, tasks, strategy ids, KV-offload options) and platforms.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from servekit.catalog.schema.base import Args, Companion, Env, NonNegativeNumber, PositiveInt, Spec


DeviceKind = Literal["gpu", "cpu", "npu", "tpu", "accelerator"]
HardwarePlatform = Literal["cuda", "rocm", "xpu", "cpu", "tpu", "ascend", "qaic"]
GatedFormat = Literal["fp8", "nvfp4", "fp4", "mxfp4"]

SERVEKIT_PROFILE_KEYS = ("kind", "platform", "compute_target", "precisions", "interconnect", "cpu_arch", "device_model")
"""servekit's own hardware-profile keys; a catalog without them gets them derived
(``servekit.hardware.profile``), so they are optional everywhere."""


class HardwareProfile(Spec):
    """One node of accelerators: ``h200`` = 8x H200 in one box."""

    brand: StrictStr
    generation: StrictStr
    display_name: StrictStr
    description: StrictStr | None = None
    gpu_count: PositiveInt
    vram_gb: NonNegativeNumber
    """Total accelerator memory of the node, GB."""
    multi_node: StrictBool = False
    scalable: StrictBool = True
    """False: cannot be joined into a multi-node deployment."""
    restricted: StrictBool = False
    """True: offered only to recipes that name it in ``meta.hardware``."""
    compute_arch: StrictStr | None = None
    """Target for ``arch:<compute_arch>`` selectors in ``supported_hardware``."""
    # servekit's own keys, derived when absent (see ``servekit.hardware.profile``):
    kind: DeviceKind | None = None
    """What one device is: gpu, cpu (a NUMA node), npu, tpu, or accelerator (a card such as Cloud AI 100)."""
    platform: HardwarePlatform | None = None
    """Software stack that drives it; picks the container device flags and default images."""
    compute_target: StrictStr | None = None
    """API:ARCH compile target of one device, e.g. ``cuda:sm_90`` or ``hip:gfx942``."""
    precisions: list[GatedFormat] | None = None
    """Gated number formats the device runs natively (fp8, nvfp4, fp4, mxfp4)."""
    interconnect: StrictStr | None = None
    """How the node's devices are linked: nvl4 (a tray of an NVL72 rack), nvlink, xgmi, pcie, ici."""
    cpu_arch: Literal["x86_64", "aarch64"] | None = None
    """Instruction set of a CPU platform's cores; picks vLLM's CPU wheel and image."""
    device_model: StrictStr | None = None
    """The id of the node's device model in servekit's device tables (``h100``, ``mi300x``, ``l4``)
    where neither the entry's id nor its display name names it (hardware local)."""
    # servekit's own keys for accelerators whose device is not one card (Cloud AI 100):
    soc_count: PositiveInt | None = None
    """SoCs (devices) in the node."""
    socs_per_card: PositiveInt | None = None
    cards_per_node: PositiveInt | None = None
    nsp_cores_per_soc: PositiveInt | None = None
    memory_gb_per_soc: NonNegativeNumber | None = None


class Task(Spec):
    id: StrictStr
    display_name: StrictStr
    description: StrictStr | None = None


class KvOffloadGroup(Spec):
    """Options sharing a ``group`` collapse into one pill with a sub-row."""

    display_name: StrictStr
    label: StrictStr | None = None
    order: StrictInt | None = None
    sub_row_label: StrictStr | None = None
    docs_url: StrictStr | None = None
    tooltip: StrictStr | None = None
    description: StrictStr | None = None


class KvOffloadOption(Spec):
    """A KV-offload choice that composes with (does not replace) the serving strategy."""

    display_name: StrictStr
    label: StrictStr | None = None
    order: StrictInt | None = None
    description: StrictStr | None = None
    args: Args = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    group: StrictStr | None = None
    requires_opt_in: StrictBool = False
    """True: disabled until a recipe lists this option as ``verified`` in ``kv_offload_support``."""
    brands: list[StrictStr] | None = None
    strategies: list[StrictStr] | None = None
    """Allow-list of serving strategies; absent = every serving strategy."""
    install: StrictStr | None = None
    docs_url: StrictStr | None = None
    companion: Companion | None = None


class Taxonomy(Spec):
    hardware_profiles: dict[str, HardwareProfile]
    tasks: list[Task] = Field(default_factory=list)
    strategies: list[StrictStr] = Field(default_factory=list)
    kv_offload_groups: dict[str, KvOffloadGroup] = Field(default_factory=dict)
    kv_offload: dict[str, KvOffloadOption] = Field(default_factory=dict)


class Platform(Spec):
    """A third-party place to self-host vLLM; recipes opt in via ``meta.platforms``."""

    id: StrictStr
    name: StrictStr
    url: StrictStr
    blurb: StrictStr | None = None
    install: StrictStr | None = None


class Platforms(Spec):
    platforms: list[Platform] = Field(default_factory=list)
