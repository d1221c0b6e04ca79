"""Recipe variants (served checkpoints / precisions) and the per-hardware overrides they carry."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictStr

from servekit.catalog.schema.base import Args, Env, NonNegativeNumber, PositiveInt, Spec, VersionText

DockerImage = StrictStr | dict[str, StrictStr | dict[str, StrictStr]]
"""One image (NVIDIA), or brand-keyed images, optionally keyed again by CUDA tag (cu129/cu130)."""


class InstallTab(Spec):
    """Overrides for one tab of the Install block; ``false`` hides the tab."""

    command: StrictStr | None = None
    note: StrictStr | None = None


class InstallTabs(Spec):
    pip: InstallTab | Literal[False] | None = None
    docker: InstallTab | Literal[False] | None = None


class HardwareOverride(Spec):
    """Extra arguments/env (and image) for one hardware key."""

    extra_args: Args = Field(default_factory=list)
    extra_env: Env = Field(default_factory=dict)
    docker_image: DockerImage | None = None
    install: InstallTabs | None = None
    install_note: StrictStr | None = None


class PrecisionHardware(Spec):
    """Widens a precision's hardware constraint to a brand or generation."""

    brand: StrictStr | None = None
    generation: StrictStr | None = None


class Variant(Spec):
    precision: StrictStr
    vram_minimum_gb: NonNegativeNumber
    description: StrictStr | None = None
    label: StrictStr | None = None
    model_id: StrictStr | None = None
    """The served checkpoint when it is not the recipe's own ``model.model_id``."""
    min_vllm_version: VersionText | None = None
    docker_image: DockerImage | None = None
    extra_args: Args = Field(default_factory=list)
    extra_env: Env = Field(default_factory=dict)
    supported_hardware: list[StrictStr] | None = None
    """Exact profile ids or ``arch:<compute_arch>`` selectors."""
    precision_hardware: PrecisionHardware | None = None
    hardware_overrides: dict[str, HardwareOverride] = Field(default_factory=dict)
    default_modes: dict[str, StrictStr] = Field(default_factory=dict)
    """Feature -> mode to select (and enable) by default for this variant."""
    tp: PositiveInt | dict[str, PositiveInt] | None = None
