"""Recipe features: a toggle that adds arguments, optionally with mutually exclusive modes."""

from __future__ import annotations

from pydantic import Field, StrictStr

from servekit.catalog.schema.base import Args, Companion, Env, Spec, SupportMark


class ArgsOverride(Spec):
    """Replacement arguments for one hardware key (profile, generation, brand or default)."""

    args: Args = Field(default_factory=list)
    env: Env = Field(default_factory=dict)


class FeatureMode(Spec):
    """One way of realising a feature (e.g. MTP vs an external draft for spec decoding)."""

    label: StrictStr | None = None
    description: StrictStr | None = None
    args: Args
    env: Env = Field(default_factory=dict)
    variants: list[StrictStr] | None = None
    """Variants this mode serves; absent or empty = every variant."""
    hardware: dict[str, SupportMark] = Field(default_factory=dict)
    """Hardware key -> ``unsupported`` to disable the mode there."""
    hardware_overrides: dict[str, ArgsOverride] = Field(default_factory=dict)


class Feature(Spec):
    description: StrictStr | None = None
    label: StrictStr | None = None
    args: Args | None = None
    """Flat arguments; a feature has either ``args`` or ``modes``, never both."""
    env: Env = Field(default_factory=dict)
    default_mode: StrictStr | None = None
    modes: dict[str, FeatureMode] | None = None
    hardware: dict[str, SupportMark] = Field(default_factory=dict)
    """Hardware key -> ``unsupported`` to disable the feature there."""
    hardware_overrides: dict[str, ArgsOverride] = Field(default_factory=dict)
    strategies: list[StrictStr] | None = None
    """Serving strategies the feature applies to; absent = all."""
    companion: Companion | None = None
    exclusive_with: list[StrictStr] = Field(default_factory=list)
    """Features that must not be enabled together with this one (servekit's own key)."""
