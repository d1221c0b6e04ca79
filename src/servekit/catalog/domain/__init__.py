"""Typed domain objects past validation: recipes, variants, features, modes, strategies.

Built from the plain (already validated) documents of ``CatalogDocuments``, once per
document and cached on it; frozen slotted dataclasses, so a bulk build pays a few
microseconds per recipe and nothing per rendering. Each keeps its document as ``raw``.
"""

from __future__ import annotations

from typing import Any

from servekit.catalog.domain.feature import Companion, Feature, Mode
from servekit.catalog.domain.hardware_block import EMPTY_BLOCK, HardwareBlock, block_or_empty
from servekit.catalog.domain.recipe import ModelSection, Recipe, RecipeMeta
from servekit.catalog.domain.strategy import NO_STRATEGY, Strategy, StrategyRole
from servekit.catalog.domain.strategy_override import NO_OVERRIDE, RoleOverride, StrategyOverride
from servekit.catalog.domain.variant import EMPTY_VARIANT, Variant

__all__ = [
    "EMPTY_BLOCK", "EMPTY_VARIANT", "NO_OVERRIDE", "NO_STRATEGY", "Companion", "Feature", "HardwareBlock", "Mode",
    "ModelSection", "Recipe", "RecipeMeta", "RoleOverride", "Strategy", "StrategyOverride", "StrategyRole",
    "Variant", "block_or_empty", "recipe_of", "strategies_of", "strategy_of",
]


def _cached(docs: Any, key: tuple[str, str], raw: Any, build) -> Any:
    """The object built from ``raw``; rebuilt when the document under ``key`` was replaced."""
    entry = docs.typed.get(key)
    if entry is None or entry[0] is not raw:
        entry = (raw, build())
        docs.typed[key] = entry
    return entry[1]


def recipe_of(docs: Any, recipe_id: str) -> Recipe:
    """The typed recipe of a known id (``KeyError`` for an unknown one)."""
    raw = docs.recipes[recipe_id]
    return _cached(docs, ("recipe", recipe_id), raw, lambda: Recipe.of(raw))


def strategy_of(docs: Any, name: str) -> Strategy:
    """A serving strategy, else a KV-store deployment of that name, else the empty strategy."""
    raw = docs.strategies.get(name) or docs.kv_store.get(name)
    if raw is None:
        return NO_STRATEGY
    return _cached(docs, ("strategy", name), raw, lambda: Strategy.of(name, raw))


def strategies_of(docs: Any) -> dict[str, Strategy]:
    """Serving strategies and KV-store deployments together, by name (as ``{**strategies,
    **kv_store}``: a KV-store deployment of the same name wins)."""
    merged = {**docs.strategies, **docs.kv_store}
    return {name: _cached(docs, ("strategy", name), raw, lambda: Strategy.of(name, raw))
            for name, raw in merged.items()}
