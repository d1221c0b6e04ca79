"""Everything synthesis reads for one selection, looked up once."""

from __future__ import annotations

from typing import Any

from servekit.errors import SelectionError
from servekit.synthesis import selection as rules
from servekit.synthesis.hardware import generation, gpu_count
from servekit.synthesis.plan import Selection

Doc = dict[str, Any]


class Context:
    """The documents one selection reads and the facts derived from them, computed once.

    Internal to synthesis (plain attributes, set in ``__init__``); ``memo`` caches pieces that
    several processes of one plan share (override blocks, feature blocks, env layers).
    """

    __slots__ = ("sel", "recipe", "variant", "strategy", "profile", "taxonomy", "kv_store", "kv_option",
                 "gen", "nvidia", "gpus", "deploy_type", "is_pd", "kv_composing", "kv_instances", "model_id",
                 "variant_path", "strategy_overrides", "so_path", "strategy_path", "memo", "_enabled")

    def __init__(self, sel: Selection, recipe: Doc, variant: Doc, strategy: Doc, profile: Doc, taxonomy: Doc,
                 kv_store: Doc | None, kv_option: Doc | None) -> None:
        self.sel, self.recipe, self.variant, self.strategy = sel, recipe, variant, strategy
        self.profile, self.taxonomy, self.kv_store, self.kv_option = profile, taxonomy, kv_store, kv_option
        self.gen = generation(profile)
        self.nvidia = profile.get("brand") == "NVIDIA"
        self.gpus = gpu_count(profile, 1)
        self.deploy_type = strategy.get("deploy_type") or "single_node"
        self.is_pd = self.deploy_type == "pd_cluster"
        self.kv_composing = kv_store is not None and not self.is_pd
        instances = (kv_store or {}).get("default_instances")
        self.kv_instances = int(instances) if isinstance(instances, int) and instances >= 1 else 2
        self.model_id = variant.get("model_id") or (recipe.get("model") or {}).get("model_id") or "unknown"
        self.variant_path = f"variants.{sel.variant}"
        overrides = (recipe.get("strategy_overrides") or {}).get(sel.strategy)
        self.strategy_overrides = overrides if isinstance(overrides, dict) else {}
        self.so_path = f"strategy_overrides.{sel.strategy}"
        self.strategy_path = f"strategies/{sel.strategy}"
        self.memo: dict = {}
        self._enabled: list[tuple[str, Doc, str | None]] | None = None

    def enabled_features(self) -> list[tuple[str, Doc, str | None]]:
        """(key, feature doc, resolved mode key or None) for every feature that applies here."""
        if self._enabled is None:
            self._enabled = list(self._walk_features())
        return self._enabled

    def _walk_features(self):
        features = self.recipe.get("features") or {}
        for key in self.sel.features:
            feature = features.get(key)
            if not isinstance(feature, dict):
                continue
            if not rules.feature_allowed_for_strategy(feature, self.sel.strategy):
                continue
            if self.kv_composing and (feature.get("companion") or {}).get("command"):
                continue
            mode = None
            if isinstance(feature.get("modes"), dict):
                mode = rules.resolve_mode(
                    feature, key, self.variant, self.sel.variant, self.profile, self.sel.hardware,
                    self.sel.mode_map.get(key),
                )
                if mode is None:
                    continue
            yield key, feature, mode


def build_context(docs, sel: Selection) -> Context:
    """Look up every document a selection names; unknown names are a SelectionError."""
    recipe = docs.recipes.get(sel.recipe_id)
    if recipe is None:
        raise SelectionError(f"unknown recipe {sel.recipe_id!r}")
    variants = recipe.get("variants") or {}
    variant = variants.get(sel.variant) or variants.get("default") or {}
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    strategy_doc = docs.strategies.get(sel.strategy) or docs.kv_store.get(sel.strategy) or {}
    kv_store = None
    kv_option = None
    if sel.kv_offload:
        if (docs.kv_store.get(sel.kv_offload) or {}).get("deploy_type") == "kv_store_lb":
            kv_store = docs.kv_store[sel.kv_offload]
        else:
            option = (docs.taxonomy.get("kv_offload") or {}).get(sel.kv_offload)
            profile = profiles.get(sel.hardware) or {}
            if (
                rules.kv_offload_allowed(option, sel.strategy, strategy_doc)
                and rules.kv_offload_supported(option, sel.kv_offload, recipe, profile)
            ):
                kv_option = option
    return Context(
        sel=sel,
        recipe=recipe,
        variant=variant,
        strategy=strategy_doc,
        profile=profiles.get(sel.hardware) or {},
        taxonomy=docs.taxonomy,
        kv_store=kv_store,
        kv_option=kv_option,
    )
