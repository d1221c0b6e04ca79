"""Everything synthesis reads for one selection, looked up once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from servekit.errors import SelectionError
from servekit.synthesis import selection as rules
from servekit.synthesis.hardware import generation, gpu_count
from servekit.synthesis.plan import Selection

Doc = dict[str, Any]


@dataclass(frozen=True)
class Context:
    sel: Selection
    recipe: Doc
    variant: Doc
    strategy: Doc
    profile: Doc
    taxonomy: Doc
    kv_store: Doc | None
    kv_option: Doc | None

    @cached_property
    def gen(self) -> str | None:
        return generation(self.profile)

    @cached_property
    def nvidia(self) -> bool:
        return self.profile.get("brand") == "NVIDIA"

    @property
    def gpus(self) -> int:
        return gpu_count(self.profile, 1)

    @property
    def deploy_type(self) -> str:
        return self.strategy.get("deploy_type") or "single_node"

    @property
    def is_pd(self) -> bool:
        return self.deploy_type == "pd_cluster"

    @property
    def kv_composing(self) -> bool:
        """A Mooncake kv-store deployment wraps a non-PD serving strategy."""
        return self.kv_store is not None and not self.is_pd

    @property
    def kv_instances(self) -> int:
        value = (self.kv_store or {}).get("default_instances")
        return int(value) if isinstance(value, int) and value >= 1 else 2

    @property
    def model_id(self) -> str:
        return self.variant.get("model_id") or (self.recipe.get("model") or {}).get("model_id") or "unknown"

    @property
    def variant_path(self) -> str:
        return f"variants.{self.sel.variant}"

    @cached_property
    def strategy_overrides(self) -> Doc:
        value = (self.recipe.get("strategy_overrides") or {}).get(self.sel.strategy)
        return value if isinstance(value, dict) else {}

    @property
    def so_path(self) -> str:
        return f"strategy_overrides.{self.sel.strategy}"

    @property
    def strategy_path(self) -> str:
        return f"strategies/{self.sel.strategy}"

    def enabled_features(self) -> list[tuple[str, Doc, str | None]]:
        """(key, feature doc, resolved mode key or None) for every feature that applies here."""
        return self._enabled

    @cached_property
    def memo(self) -> dict:
        """Per-selection cache for pieces several processes share (layers, feature blocks)."""
        return {}

    @cached_property
    def _enabled(self) -> list[tuple[str, Doc, str | None]]:
        return list(self._walk_features())

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
    strategies = {**docs.strategies, **docs.kv_store}
    kv_store = None
    kv_option = None
    if sel.kv_offload:
        if (docs.kv_store.get(sel.kv_offload) or {}).get("deploy_type") == "kv_store_lb":
            kv_store = docs.kv_store[sel.kv_offload]
        else:
            option = (docs.taxonomy.get("kv_offload") or {}).get(sel.kv_offload)
            strategy_doc = strategies.get(sel.strategy) or {}
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
        strategy=strategies.get(sel.strategy) or {},
        profile=profiles.get(sel.hardware) or {},
        taxonomy=docs.taxonomy,
        kv_store=kv_store,
        kv_option=kv_option,
    )
