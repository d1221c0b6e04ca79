"""One hardware-override block: what a recipe, variant, strategy override, feature or mode
adds on one hardware key (exact profile id, generation, brand or ``default``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.values import Doc, mapping


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class HardwareBlock:
    """Arguments, env and image one hardware key adds; values stay as written (None = absent)."""

    extra_args: Any
    extra_env: Any
    args: Any
    env: Any
    docker_image: Any
    vram_minimum_gb: Any
    model_id: Any
    raw: Doc

    @classmethod
    def of(cls, raw: Doc) -> HardwareBlock:
        get = raw.get
        return cls(get("extra_args"), get("extra_env"), get("args"), get("env"), get("docker_image"),
                   get("vram_minimum_gb"), get("model_id"), raw)

    def field(self, name: str) -> Any:
        """``extra_args`` / ``extra_env`` / ``args`` / ``env`` by name (layered readers pick one)."""
        return getattr(self, name)


EMPTY_BLOCK = HardwareBlock.of({})


def block_map(value: Any) -> dict[str, Any]:
    """A ``hardware_overrides`` map: mapping blocks become ``HardwareBlock``; other values
    (null, ``false``) are kept as written, so ``present()`` reads them as before."""
    return {key: HardwareBlock.of(block) if isinstance(block, dict) else block
            for key, block in mapping(value).items()}


def block_or_empty(value: Any) -> HardwareBlock:
    """A looked-up block, or the empty block when the key names no mapping."""
    return value if isinstance(value, HardwareBlock) else EMPTY_BLOCK
