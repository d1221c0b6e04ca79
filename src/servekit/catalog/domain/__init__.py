"""Typed domain objects past validation: recipes, variants, features, modes, strategies,
KV-store deployments, KV-offload options and vLLM-Omni tasks.

Built from the plain (already validated) documents of ``CatalogDocuments``, once per
document and cached on it; frozen slotted dataclasses, so a bulk build pays a few
microseconds per recipe and nothing per rendering. Each keeps its document as ``raw``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servekit.catalog.domain.feature import Companion, Feature, Mode
from servekit.catalog.domain.hardware_block import EMPTY_BLOCK, HardwareBlock, block_or_empty
from servekit.catalog.domain.install import Dependency, InstallTab
from servekit.catalog.domain.omni import Omni, OmniTask
from servekit.catalog.domain.recipe import ModelSection, Recipe, RecipeMeta
from servekit.catalog.domain.strategy import NO_STRATEGY, Strategy, StrategyRole
from servekit.catalog.domain.strategy_override import NO_OVERRIDE, RoleOverride, StrategyOverride
from servekit.catalog.domain.variant import EMPTY_VARIANT, Variant

if TYPE_CHECKING:
    from servekit.catalog.domain.kv_offload import KvOffload
    from servekit.catalog.domain.kv_store import KvProcess, KvStore

__all__ = [
    "EMPTY_BLOCK", "EMPTY_VARIANT", "NO_OVERRIDE", "NO_STRATEGY", "Companion", "Dependency", "Feature",
    "HardwareBlock", "InstallTab", "KvOffload", "KvProcess", "KvStore", "Mode", "ModelSection", "Omni", "OmniTask", "Recipe", "RecipeMeta",
    "RoleOverride", "Strategy", "StrategyOverride", "StrategyRole", "Variant", "block_or_empty",
    "kv_offload_keys", "kv_offload_of", "kv_store_of", "recipe_of", "strategies_of", "strategy_of",
]

_LAZY = {
    "KvOffload": "servekit.catalog.domain.kv_offload",
    "KvProcess": "servekit.catalog.domain.kv_store",
    "KvStore": "servekit.catalog.domain.kv_store",
}


def __getattr__(name: str) -> Any:
    """The KV-store and KV-offload types, imported on first use: a plan without either (most)
    does not create their classes."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


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


def kv_store_of(docs: Any, name: str | None) -> KvStore | None:
    """The KV-store deployment of that name (None when the catalog has none, or it is empty)."""
    raw = docs.kv_store.get(name) if name else None
    if not raw:
        return None
    from servekit.catalog.domain.kv_store import KvStore

    return _cached(docs, ("kv_store", name), raw, lambda: KvStore.of(name, raw))


def _kv_offload_docs(docs: Any) -> dict[str, Any]:
    return docs.taxonomy.get("kv_offload") or {}


def kv_offload_keys(docs: Any) -> list[str]:
    """Every ``--kv-offload`` choice: the KV-store deployments, then the taxonomy options."""
    return [*docs.kv_store, *_kv_offload_docs(docs)]


def kv_offload_of(docs: Any, key: str | None) -> KvOffload | None:
    """The taxonomy KV-offload option of that key (None when there is none, or it is empty)."""
    raw = _kv_offload_docs(docs).get(key) if key else None
    if not raw:
        return None
    from servekit.catalog.domain.kv_offload import KvOffload

    return _cached(docs, ("kv_offload", key), raw, lambda: KvOffload.of(key, raw))
