"""Recipe features, their modes and companion commands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.hardware_block import block_map
from servekit.catalog.domain.values import Doc, mapping


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Mode:
    """``features.<key>.modes.<mode>``: the arguments one mode runs with."""

    key: str
    args: Any
    env: Any
    variants: Any
    """A list of variant keys the mode is limited to; anything else (or empty) means all."""
    hardware: Any
    """Support marks per generation or exact id (``unsupported`` hides the mode there)."""
    hardware_overrides: dict[str, Any]
    min_vllm_version: Any
    raw: Doc

    @classmethod
    def of(cls, key: str, raw: Any) -> Mode:
        doc = mapping(raw)
        get = doc.get
        return cls(key, get("args"), get("env"), get("variants"), get("hardware"),
                   block_map(get("hardware_overrides")), get("min_vllm_version"), doc)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Companion:
    """A second command a feature documents beside the server (e.g. a tool server)."""

    command: Any
    label: Any
    description: Any

    @classmethod
    def of(cls, raw: Any) -> Companion:
        get = mapping(raw).get
        return cls(get("command"), get("label"), get("description"))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Feature:
    """``features.<key>``. ``modes`` is None unless the feature declares a mapping of modes."""

    key: str
    description: Any
    args: Any
    env: Any
    modes: dict[str, Mode] | None
    default_mode: Any
    strategies: Any
    exclusive_with: Any
    companion: Companion
    hardware_overrides: dict[str, Any]
    min_vllm_version: Any
    raw: Doc

    @classmethod
    def of(cls, key: str, raw: Doc) -> Feature:
        get = raw.get
        modes = get("modes")
        return cls(key, get("description"), get("args"), get("env"),
                   {k: Mode.of(k, m) for k, m in modes.items()} if isinstance(modes, dict) else None,
                   get("default_mode"), get("strategies"), get("exclusive_with"), Companion.of(get("companion")),
                   block_map(get("hardware_overrides")), get("min_vllm_version"), raw)

    def allowed_for_strategy(self, strategy: str) -> bool:
        """A ``strategies`` list limits the feature to those strategies; empty or absent = all."""
        allowed = self.strategies
        return not isinstance(allowed, list) or not allowed or strategy in allowed


def features_of(value: Any) -> dict[str, Feature | None]:
    """Every feature key in order; an entry that is not a mapping reads as None."""
    return {key: Feature.of(key, doc) if isinstance(doc, dict) else None for key, doc in mapping(value).items()}
