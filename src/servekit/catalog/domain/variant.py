"""A recipe variant: one served checkpoint / precision and what it adds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.hardware_block import HardwareBlock, block_map
from servekit.catalog.domain.values import Doc, mapping


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Variant:
    """``variants.<key>``. ``empty`` marks a null or ``{}`` entry (the default variant stands
    in for it where a selection names it); scalars and argument values stay as written."""

    key: str
    precision: Any
    model_id: Any
    vram_minimum_gb: Any
    min_vllm_version: Any
    tp: Any
    """One number, or a layered map (exact id > generation > brand > ``default``)."""
    extra_args: Any
    extra_env: Any
    docker_image: Any
    supported_hardware: Any
    precision_hardware: Any
    default_modes: Doc
    hardware_overrides: dict[str, Any]
    description: Any
    empty: bool
    raw: Doc

    @classmethod
    def of(cls, key: str, raw: Any) -> Variant:
        doc = mapping(raw)
        get = doc.get
        return cls(key, get("precision"), get("model_id"), get("vram_minimum_gb"), get("min_vllm_version"),
                   get("tp"), get("extra_args"), get("extra_env"), get("docker_image"), get("supported_hardware"),
                   get("precision_hardware"), mapping(get("default_modes")), block_map(get("hardware_overrides")),
                   get("description"), not raw, doc)

    def exact_block(self, hw_id: str | None) -> HardwareBlock | None:
        """The block keyed by this exact hardware id, when it is a mapping."""
        block = self.hardware_overrides.get(hw_id) if hw_id else None
        return block if isinstance(block, HardwareBlock) else None


EMPTY_VARIANT = Variant.of("default", {})
