"""``omni`` recipes: served through vLLM-Omni endpoints rather than a chat command."""

from __future__ import annotations

from pydantic import Field, StrictStr

from servekit.catalog.schema.base import Args, NonNegativeNumber, PositiveInt, Spec


class OmniAxisOption(Spec):
    id: StrictStr
    label: StrictStr | None = None


class OmniTaskAxis(Spec):
    id: StrictStr
    label: StrictStr | None = None
    options: list[OmniAxisOption] = Field(default_factory=list)


class OmniTaskOverride(Spec):
    curl: StrictStr | None = None
    extra_args: Args = Field(default_factory=list)
    vram_minimum_gb: NonNegativeNumber | None = None


class OmniTask(Spec):
    id: StrictStr
    key: StrictStr | None = None
    label: StrictStr | None = None
    endpoint: StrictStr | None = None
    description: StrictStr | None = None
    curl: StrictStr | None = None
    model_id: StrictStr | None = None
    extra_args: Args = Field(default_factory=list)
    vram_minimum_gb: NonNegativeNumber | None = None
    axes: dict[str, StrictStr] = Field(default_factory=dict)
    hardware_overrides: dict[str, OmniTaskOverride] = Field(default_factory=dict)


class Omni(Spec):
    port: PositiveInt | None = None
    tasks: list[OmniTask | StrictStr] = Field(default_factory=list)
    """Task objects, or bare task ids."""
    task_axes: list[OmniTaskAxis] = Field(default_factory=list)
    task_label: StrictStr | None = None
    task_hint: StrictStr | None = None
    variant_label: StrictStr | None = None
    variant_hint: StrictStr | None = None
