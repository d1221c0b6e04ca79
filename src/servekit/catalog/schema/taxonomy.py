"""taxonomy.yaml (hardware profiles, tasks, strategy ids, KV-offload options) and platforms.yaml."""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictInt, StrictStr

from servekit.catalog.schema.base import Args, Companion, Env, NonNegativeNumber, PositiveInt, Spec


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
