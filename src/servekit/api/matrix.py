"""Which commands the static API publishes for one variant of a recipe, per hardware.

For each hardware the variant can run on, the API carries one *recommended* rendering (the
strategy and node count a user gets by default there) plus one *alternative* rendering per
other strategy that is offered on that hardware: serving strategies the recipe lists, the PD
cluster, and every KV-store deployment (composed with a serving strategy) where the hardware
can run the store. The rules themselves (default hardware, offered strategies, KV-store gates,
node floors, default features, PD pool sizes) live in ``servekit.synthesis.selection``, the
headline strategy and node count in ``servekit.synthesis.resolve.recommended_layout``; this
module only enumerates the matrix the API publishes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import Recipe, Strategy, Variant, strategies_of
from servekit.records import record
from servekit.synthesis import selection as sel
from servekit.synthesis.resolve import recommended_layout

Doc = dict[str, Any]

PD_CLUSTER = "pd_cluster"
KV_STORE_LB = "kv_store_lb"
MULTI_NODE = "multi_node"


@record
class RenderRequest:
    """One command to render: everything the synthesis needs, spelled out."""

    variant: str
    strategy: str
    hardware: str
    node_count: int
    features: tuple[str, ...]
    pd_nodes: tuple[tuple[str, int], ...] | None = None
    """Nodes per PD pool role, e.g. ``(("prefill", 2), ("decode", 2))``; None = co-located."""
    kv_offload: str | None = None


Renderer = Callable[[RenderRequest], "dict[str, Any] | None"]
"""Renders one request to the public rendering object, or None when it cannot be built."""


@dataclass
class HardwareRendering:
    """What the API publishes for one (variant, hardware): headline plus alternatives."""

    recommended: dict[str, Any]
    alternatives: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: dict[str | None, RenderRequest] = field(default_factory=dict)
    """What each object was rendered from: None for the headline, else the strategy id."""


@record
class MatrixContext:
    """Catalog-wide inputs, shared by every recipe of one build."""

    docs: CatalogDocuments
    profiles: dict[str, Doc]
    strategies: dict[str, Doc]
    """Serving strategies and KV-store deployments together, looked up by id."""
    typed_strategies: dict[str, Strategy] = field(default_factory=dict)
    """The same strategies as typed domain objects (what the rules read)."""
    typed_recipes: dict[int, tuple[Doc, Recipe]] = field(default_factory=dict)

    @classmethod
    def of(cls, docs: CatalogDocuments) -> MatrixContext:
        profiles = docs.taxonomy.get("hardware_profiles") or {}
        return cls(docs, profiles, {**docs.strategies, **docs.kv_store}, strategies_of(docs))

    def recipe(self, raw: Doc) -> Recipe:
        """The typed recipe of a document of this build (built once per document)."""
        entry = self.typed_recipes.get(id(raw))
        if entry is None or entry[0] is not raw:
            entry = (raw, Recipe.of(raw))
            self.typed_recipes[id(raw)] = entry
        return entry[1]

    @property
    def kv_store_ids(self) -> list[str]:
        return [k for k, d in self.strategies.items() if d.get("deploy_type") == KV_STORE_LB]

    def deploy_type(self, strategy: str) -> str | None:
        return (self.strategies.get(strategy) or {}).get("deploy_type")


def is_omni(recipe: Doc) -> bool:
    return "omni" in ((recipe.get("meta") or {}).get("tasks") or [])


def hardware_targets(ctx: MatrixContext, raw: Doc, variant_key: str) -> list[str]:
    """The variant's default hardware first, then every other hardware it is offered on."""
    recipe = ctx.recipe(raw)
    default = sel.default_hardware(ctx.profiles, recipe, variant_key)
    visible = [
        hw
        for hw in sel.compatible_hardware(ctx.profiles, recipe, variant_key)
        if sel.hardware_visible(ctx.profiles.get(hw) or {}, hw, recipe)
    ]
    return list(dict.fromkeys([default, *visible]))


def _offered_strategies(ctx: MatrixContext, recipe: Recipe, profile: Doc, hw: str) -> list[str]:
    """Serving strategies offered on this hardware, then the KV-store deployments it can run."""
    serving = sel.offered_strategies(recipe, profile, hw, ctx.typed_strategies)
    stores = [k for k in ctx.kv_store_ids if k not in serving and sel.kv_store_offered(recipe, profile, hw, k)]
    return serving + stores


def _kv_serving_strategy(ctx: MatrixContext, recipe: Recipe, profile: Doc, nodes: int) -> str | None:
    """The serving strategy a KV-store deployment composes with at ``nodes`` per instance."""

    def composes(name: str) -> bool:
        if not ctx.strategies.get(name):
            return False
        doc = ctx.typed_strategies[name]
        if doc.deploy_type in (PD_CLUSTER, KV_STORE_LB):
            return False
        if not sel.strategy_allows_kv_offload(doc):
            return False
        return (doc.deploy_type == MULTI_NODE) == (nodes > 1)

    chosen = sel.recommended_strategy(recipe, profile, nodes)
    if composes(chosen):
        return chosen
    return next((s for s in sel.effective_compatible_strategies(recipe) if composes(s)), None)


def _kv_store_request(
    ctx: MatrixContext, recipe: Recipe, variant_key: str, variant: Variant, hw: str, kv_id: str,
    features: tuple[str, ...],
) -> RenderRequest | None:
    profile = ctx.profiles.get(hw) or {}
    nodes = 1 if sel.fits_single_node(profile, variant, hw) else 2
    serving = _kv_serving_strategy(ctx, recipe, profile, nodes)
    if serving is None and nodes == 2:  # nothing shards across nodes: single-node instances
        nodes = 1
        serving = _kv_serving_strategy(ctx, recipe, profile, nodes)
    if serving is None:
        return None
    if ctx.deploy_type(serving) == MULTI_NODE:
        nodes = max(nodes, sel.nodes_for_strategy(recipe, serving, profile.get("gpu_count"), hw))
    return RenderRequest(variant_key, serving, hw, nodes, features, kv_offload=kv_id)


def _typed_strategy(ctx: MatrixContext, name: str) -> Strategy | None:
    """A strategy of this build by id, when one is there (a null or empty document counts as none)."""
    return ctx.typed_strategies[name] if ctx.strategies.get(name) else None


def _pool_tuple(pools: dict[str, int] | None) -> tuple[tuple[str, int], ...] | None:
    return None if pools is None else tuple(pools.items())


def render_hardware(
    ctx: MatrixContext, raw: Doc, variant_key: str, hw: str, render: Renderer
) -> HardwareRendering | None:
    """The recommended rendering and alternatives of one variant on one hardware."""
    recipe = ctx.recipe(raw)
    variant = recipe.variant(variant_key)
    if variant is None or variant.empty or is_omni(raw):
        return None
    profile = ctx.profiles.get(hw) or {}
    scalable = sel.hardware_scalable(profile)
    if not scalable and not sel.fits_single_node(profile, variant, hw):
        # one-box hardware cannot shard an oversized variant: publish the largest that fits
        fitting = sel.fitting_variant(recipe, profile, hw)
        if not fitting:
            return None
        variant_key, variant = fitting, recipe.variants[fitting]

    offered = _offered_strategies(ctx, recipe, profile, hw)
    headline, head_nodes = recommended_layout(ctx.docs, recipe, variant_key, hw)
    features = tuple(sel.default_features(recipe, hw, variant_key))

    def node_count(strategy: str) -> int:
        return sel.strategy_node_count(recipe, strategy, _typed_strategy(ctx, strategy), profile, hw)

    pd_nodes = None
    if headline == PD_CLUSTER:
        pools = sel.pd_pool_nodes(profile, variant, recipe, ctx.typed_strategies, hw)
        if pools == "skip":
            return None
        pd_nodes = _pool_tuple(pools)
    head_request = RenderRequest(variant_key, headline, hw, head_nodes, features, pd_nodes)
    recommended = render(head_request)
    if recommended is None:
        return None
    recommended["strategy_spec"] = ctx.strategies.get(headline)
    recommended["hardware_profile"] = profile
    out = HardwareRendering(recommended, requests={None: head_request})

    for name in offered:
        if name == headline:
            continue
        if name == PD_CLUSTER:
            pools = sel.pd_pool_nodes(profile, variant, recipe, ctx.typed_strategies, hw)
            if pools == "skip":
                continue
            request = RenderRequest(variant_key, name, hw, 1, features, _pool_tuple(pools))
        elif ctx.deploy_type(name) == KV_STORE_LB:
            request = _kv_store_request(ctx, recipe, variant_key, variant, hw, name, features)
            if request is None:
                continue
        else:
            request = RenderRequest(variant_key, name, hw, node_count(name), features)
        rendered = render(request)
        if rendered is not None:
            out.alternatives[name] = rendered
            out.requests[name] = request
    return out
