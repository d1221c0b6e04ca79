"""Everything synthesis reads for one selection, looked up once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servekit.catalog.domain import (
    Feature,
    Recipe,
    Strategy,
    StrategyOverride,
    Variant,
    kv_offload_of,
    kv_store_of,
    recipe_of,
    strategy_of,
)
from servekit.errors import SelectionError
from servekit.hardware import HardwareProfile, profile_of, profiles_for
from servekit.synthesis import selection as rules
from servekit.synthesis.plan import Selection

if TYPE_CHECKING:
    from servekit.catalog.domain.kv_offload import KvOffload
    from servekit.catalog.domain.kv_store import KvStore

Doc = dict[str, Any]


class Context:
    """The documents one selection reads and the facts derived from them, computed once.

    Internal to synthesis (plain attributes, set in ``__init__``); ``recipe``, ``variant``,
    ``strategy``, ``strategy_overrides``, ``kv_store`` and ``kv_option`` are typed domain objects
    (the last two None unless the selection's KV offload applies), ``hw`` is the typed hardware
    profile and ``profile`` its taxonomy entry as written; ``memo`` caches pieces that
    several processes of one plan share (override blocks, feature blocks, env layers).
    """

    __slots__ = ("sel", "recipe", "variant", "strategy", "profile", "hw", "taxonomy", "kv_store", "kv_option",
                 "gen", "nvidia", "gpus", "deploy_type", "is_pd", "kv_composing", "kv_instances", "model_id",
                 "variant_path", "strategy_overrides", "so_path", "strategy_path", "memo", "_enabled")

    def __init__(self, sel: Selection, recipe: Recipe, variant: Variant, strategy: Strategy, profile: Doc,
                 taxonomy: Doc, kv_store: KvStore | None, kv_option: KvOffload | None) -> None:
        self.sel, self.recipe, self.variant, self.strategy = sel, recipe, variant, strategy
        self.profile, self.taxonomy, self.kv_store, self.kv_option = profile, taxonomy, kv_store, kv_option
        self.hw: HardwareProfile = profiles_for(taxonomy).get(sel.hardware) or profile_of(profile, sel.hardware)
        self.gen = self.hw.generation
        self.nvidia = self.hw.brand == "NVIDIA"
        self.gpus = self.hw.devices
        self.deploy_type = strategy.deploy_type or "single_node"
        self.is_pd = self.deploy_type == "pd_cluster"
        self.kv_composing = kv_store is not None and not self.is_pd
        instances = kv_store.default_instances if kv_store is not None else None
        self.kv_instances = int(instances) if isinstance(instances, int) and instances >= 1 else 2
        self.model_id = variant.model_id or recipe.model.model_id or "unknown"
        self.variant_path = f"variants.{sel.variant}"
        self.strategy_overrides: StrategyOverride = recipe.strategy_override(sel.strategy)
        self.so_path = f"strategy_overrides.{sel.strategy}"
        self.strategy_path = f"strategies/{sel.strategy}"
        self.memo: dict = {}
        self._enabled: list[tuple[str, Feature, str | None]] | None = None

    def enabled_features(self) -> list[tuple[str, Feature, str | None]]:
        """(key, feature, resolved mode key or None) for every feature that applies here."""
        if self._enabled is None:
            self._enabled = list(self._walk_features())
        return self._enabled

    def _walk_features(self):
        features = self.recipe.features
        for key in self.sel.features:
            feature = features.get(key)
            if feature is None:
                continue
            if not feature.allowed_for_strategy(self.sel.strategy):
                continue
            if self.kv_composing and feature.companion.command:
                continue
            mode = None
            if feature.modes is not None:
                mode = rules.resolve_mode(
                    feature, key, self.variant, self.sel.variant, self.profile, self.sel.hardware,
                    self.sel.mode_map.get(key),
                )
                if mode is None:
                    continue
            yield key, feature, mode


def build_context(docs, sel: Selection) -> Context:
    """Look up every document a selection names; unknown names are a SelectionError."""
    if docs.recipes.get(sel.recipe_id) is None:
        raise SelectionError(f"unknown recipe {sel.recipe_id!r}")
    recipe = recipe_of(docs, sel.recipe_id)
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    strategy_doc = strategy_of(docs, sel.strategy)
    kv_store = None
    kv_option = None
    if sel.kv_offload:
        store = kv_store_of(docs, sel.kv_offload)
        if store is not None and store.deploy_type == "kv_store_lb":
            kv_store = store
        else:
            option = kv_offload_of(docs, sel.kv_offload)
            profile = profiles.get(sel.hardware) or {}
            if (
                rules.kv_offload_allowed(option, sel.strategy, strategy_doc)
                and rules.kv_offload_supported(option, sel.kv_offload, recipe, profile)
            ):
                kv_option = option
    return Context(
        sel=sel,
        recipe=recipe,
        variant=recipe.variant_or_default(sel.variant),
        strategy=strategy_doc,
        profile=profiles.get(sel.hardware) or {},
        taxonomy=docs.taxonomy,
        kv_store=kv_store,
        kv_option=kv_option,
    )
