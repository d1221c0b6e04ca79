"""One recipe file: ``models/<org>/<repo>.yaml``."""

from __future__ import annotations

import datetime as _dt
from typing import Literal

from pydantic import Field, StrictBool, StrictStr

from servekit.catalog.schema.base import (
    Args,
    Env,
    NonNegativeInt,
    PositiveInt,
    Spec,
    SupportMark,
    VersionText,
)
from servekit.catalog.schema.feature import Feature
from servekit.catalog.schema.omni import Omni
from servekit.catalog.schema.strategy_override import StrategyOverride
from servekit.catalog.schema.variant import DockerImage, HardwareOverride, InstallTabs, Variant

HardwareStatus = Literal["verified", "supported", "unsupported"]


class PlatformRef(Spec):
    """A recipe's opt-in to a platform, with recipe-specific text."""

    id: StrictStr
    blurb: StrictStr | None = None
    install: StrictStr | None = None
    script: StrictStr | None = None


class Meta(Spec):
    title: StrictStr
    slug: StrictStr | None = None
    provider: StrictStr
    description: StrictStr | None = None
    date_added: _dt.date | None = None
    date_updated: _dt.date | None = None
    difficulty: StrictStr | None = None
    """beginner | intermediate | advanced (free text is shown as written)."""
    tasks: list[StrictStr] = Field(default_factory=list)
    performance_headline: StrictStr | None = None
    related_recipes: list[StrictStr] = Field(default_factory=list)
    hardware: dict[str, HardwareStatus] = Field(default_factory=dict)
    """Exact profile id -> verified (tested end to end) | supported | unsupported (known not to run)."""
    default_hardware: StrictStr | None = None
    platforms: list[PlatformRef | StrictStr] = Field(default_factory=list)


class DockerSource(Spec):
    mount_path: StrictStr


class ModelSection(Spec):
    model_id: StrictStr
    min_vllm_version: VersionText
    architecture: Literal["dense", "moe"]
    parameter_count: StrictStr | None = None
    active_parameters: StrictStr | None = None
    context_length: NonNegativeInt | None = None
    base_args: Args = Field(default_factory=list)
    base_env: Env = Field(default_factory=dict)
    docker_image: DockerImage | None = None
    docker_source: DockerSource | None = None
    install: InstallTabs | None = None
    nightly_required: StrictBool = False
    supports_dcp: StrictBool = False
    flashinfer_autotune: StrictBool | None = None
    default_frontend: StrictStr | None = None


class Dependency(Spec):
    """An extra install step shown above the serve command."""

    command: StrictStr
    note: StrictStr | None = None
    optional: StrictBool = False
    brand: StrictStr | list[StrictStr] | None = None
    """The brands the step is for (one name or a list); absent: every brand."""
    install_modes: list[Literal["pip", "docker"]] = Field(default_factory=list)


class NoteLink(Spec):
    label: StrictStr
    href: StrictStr


class HardwareNote(Spec):
    title: StrictStr
    body: StrictStr
    link: NoteLink | None = None


class Recipe(Spec):
    meta: Meta
    model: ModelSection
    dependencies: list[Dependency] = Field(default_factory=list)
    features: dict[str, Feature] = Field(default_factory=dict)
    opt_in_features: list[StrictStr] = Field(default_factory=list)
    hardware_opt_in_features: dict[str, list[StrictStr]] = Field(default_factory=dict)
    """Exact profile id -> features that default off on that hardware."""
    variants: dict[str, Variant]
    compatible_strategies: list[StrictStr] = Field(default_factory=list)
    default_strategy: StrictStr | None = None
    hardware_overrides: dict[str, HardwareOverride] = Field(default_factory=dict)
    strategy_overrides: dict[str, StrategyOverride] = Field(default_factory=dict)
    strategy_hardware: dict[str, dict[str, SupportMark]] = Field(default_factory=dict)
    """Strategy -> hardware key -> supported | unsupported (overrides compatible_strategies)."""
    strategy_min_gpus: dict[str, PositiveInt] = Field(default_factory=dict)
    """Strategy id or exact profile id -> minimum GPUs the deployment needs."""
    kv_offload_support: dict[str, HardwareStatus] = Field(default_factory=dict)
    kv_cache_strategy_hardware: dict[str, dict[str, SupportMark]] = Field(default_factory=dict)
    """kv_store deployment -> exact profile id -> unsupported to opt that GPU out."""
    hardware_notes: dict[str, HardwareNote] = Field(default_factory=dict)
    omni: Omni | None = None
    guide: StrictStr | None = None
