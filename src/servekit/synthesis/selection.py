"""Every default rule of the catalog, in one place: default hardware, fitting variant,
recommended strategy, offered strategies and node counts, default and forced features, mode
resolution. Feature exclusions (``exclusions``) and KV-offload gates (``kv_offload``) live in
their own modules and are re-exported here. Pure functions over the typed recipe, variant,
feature, mode and strategy (``servekit.catalog.domain``) and taxonomy hardware profiles.
"""

from __future__ import annotations

import math
import re
from typing import Any

from servekit.catalog.domain import Feature, Mode, Recipe, Strategy, Variant
from servekit.hardware import profile_of
from servekit.hardware.precision import needs_native_precision
from servekit.synthesis.hardware import (  # noqa: F401 - hardware predicates are part of this API
    KV_STORE_PLATFORMS,
    Profile,
    brand,
    generations,
    gpu_count,
    hardware_scalable,
    hardware_supported,
    hardware_visible,
    kv_store_brand_supported,
    layered_value,
    node_vram_gb,
    precision_compatible,
    variant_hardware_supported,
)
from servekit.synthesis.exclusions import (  # noqa: F401 - part of this API
    apply_exclusions,
    conflicting_requests,
    exclusive_with,
)
from servekit.synthesis.kv_offload import (  # noqa: F401 - part of this API
    kv_offload_allowed,
    kv_offload_supported,
    kv_store_offered,
    strategy_allows_kv_offload,
)

MAX_NODES = 16
"""Most nodes one deployment (or one PD pool) may span."""

MAX_PD_NODES_PER_ROLE = 4
"""A PD rendering that would need more nodes per role than this is not offered."""

PREFERRED_MULTI_NODE = ("multi_node_tp", "multi_node_dep", "multi_node_tep")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


# ── hardware ─────────────────────────────────────────────────────────────────────────────


def hardware_allowed(profiles: dict[str, Profile], recipe: Recipe, variant: Variant | None, hw_id: str) -> bool:
    profile = profiles.get(hw_id) or {}
    return (
        precision_compatible(profile, variant)
        and hardware_supported(recipe, hw_id)
        and variant_hardware_supported(variant, hw_id, profile)
    )


def compatible_hardware(profiles: dict[str, Profile], recipe: Recipe, variant_key: str = "default") -> list[str]:
    """Profiles a variant may render on (precision, recipe opt-outs, variant allowlist)."""
    variant = recipe.variant(variant_key)
    return [hw for hw in profiles if hardware_allowed(profiles, recipe, variant, hw)]


def default_hardware(profiles: dict[str, Profile], recipe: Recipe, variant_key: str = "default") -> str:
    """The landing hardware: the author's pick, else B200/GB200 for Blackwell-only, else H200."""
    variant = recipe.variant(variant_key)
    candidates = [
        hw
        for hw in compatible_hardware(profiles, recipe, variant_key)
        if hardware_visible(profiles[hw], hw, recipe)
    ]
    authored = recipe.meta.default_hardware
    if authored and authored in candidates:
        return authored
    if _lands_on_blackwell(variant):
        for hw in ("b200", "gb200"):
            if hw in candidates:
                return hw
    if "h200" in candidates:
        return "h200"
    order = {"cuda": 0, "rocm": 1}
    candidates.sort(key=lambda hw: (order.get(profile_of(profiles[hw], hw).platform, 9), hw))
    return candidates[0] if candidates else "h200"


def _lands_on_blackwell(variant: Variant | None) -> bool:
    """A variant whose precision needs Blackwell lands on B200 (else GB200) rather than H200."""
    explicit = variant.precision_hardware if variant is not None else None
    if explicit:
        return explicit.get("generation") == "blackwell"
    return needs_native_precision(variant.raw if variant is not None else None)


# ── variants and VRAM ────────────────────────────────────────────────────────────────────


def variant_vram_minimum_gb(variant: Variant | None, hw_id: str | None = None) -> float:
    """A variant's VRAM floor; ``hardware_overrides.<hw>.vram_minimum_gb`` wins for that GPU."""
    if variant is None:
        return 0.0
    override = variant.exact_block(hw_id)
    if override is not None and _number(override.vram_minimum_gb) > 0:
        return _number(override.vram_minimum_gb)
    return _number(variant.vram_minimum_gb)


def fits_single_node(profile: Profile | None, variant: Variant | None, hw_id: str | None = None) -> bool:
    """Missing size information counts as a fit (incomplete metadata never blocks)."""
    node = node_vram_gb(profile)
    need = variant_vram_minimum_gb(variant, hw_id)
    return need <= 0 or node <= 0 or need <= node


def pd_fits_single_node(profile: Profile | None, variant: Variant | None, hw_id: str | None = None) -> bool:
    """Co-located PD halves the node: it needs two GPUs and twice the model's VRAM."""
    if not profile or variant is None:
        return False
    if gpu_count(profile, 0) < 2:
        return False
    return node_vram_gb(profile) >= 2 * variant_vram_minimum_gb(variant, hw_id)


def variant_runs_on_hardware(profile: Profile, variant: Variant, hw_id: str | None = None) -> bool:
    if not precision_compatible(profile, variant):
        return False
    if hw_id and not variant_hardware_supported(variant, hw_id, profile):
        return False
    return hardware_scalable(profile) or fits_single_node(profile, variant, hw_id)


def fitting_variant(recipe: Recipe, profile: Profile, hw_id: str | None = None) -> str | None:
    """The largest-footprint variant that runs here (for non-scalable hardware)."""
    fitting = [(key, v) for key, v in recipe.variants.items() if variant_runs_on_hardware(profile, v, hw_id)]
    if not fitting:
        return None
    top = max(_number(v.vram_minimum_gb) for _, v in fitting)
    return next(k for k, v in fitting if _number(v.vram_minimum_gb) == top)


# ── strategies and node counts ───────────────────────────────────────────────────────────


def effective_compatible_strategies(recipe: Recipe) -> list[str]:
    """``compatible_strategies`` plus strategies granted ``supported`` in ``strategy_hardware``."""
    listed = list(recipe.compatible_strategies)
    grants = [
        name
        for name, gate in recipe.strategy_hardware.items()
        if name not in listed and isinstance(gate, dict) and "supported" in gate.values()
    ]
    return listed + grants


def strategy_supported_on_hardware(recipe: Recipe, strategy: str, profile: Profile | None,
                                   hw_id: str | None) -> bool:
    gate = layered_value(recipe.strategy_hardware.get(strategy), profile, hw_id)
    if gate is not None:
        return gate != "unsupported"
    return strategy in recipe.compatible_strategies


def recommended_strategy(recipe: Recipe, profile: Profile | None = None, node_count: int = 1,
                         offered: list[str] | None = None) -> str:
    """Tensor parallel first, unless the recipe names a ``default_strategy`` it offers; among
    ``offered`` (the strategies offered on one hardware, ``offered_strategies``) when given."""
    compatible = offered if offered is not None else effective_compatible_strategies(recipe)
    explicit = recipe.default_strategy
    if explicit and explicit in compatible:
        if node_count > 1 and explicit.startswith("single_node_"):
            sibling = "multi_node_" + explicit[len("single_node_"):]
            if sibling in compatible:
                return sibling
        else:
            return explicit
    if node_count > 1:
        spanning = [s for s in compatible if s.startswith("multi_node_")]
        ranked = [n for n in PREFERRED_MULTI_NODE if n in spanning] + spanning
        if ranked:
            return ranked[0]
    if "single_node_tp" in compatible:
        return "single_node_tp"
    return compatible[0] if compatible else "single_node_tp"


def _floor_in(block: Any, key: str) -> float:
    if block is None:
        return 0
    if isinstance(block, (int, float)) and not isinstance(block, bool):
        return block
    if not isinstance(block, dict):
        return 0
    for name in (key, f"multi_node_{key}", f"single_node_{key}"):
        if block.get(name) is not None:
            return _number(block[name])
    return 0


def min_gpus_for_strategy(recipe: Recipe, key: str, hw_id: str | None = None) -> float:
    """``strategy_min_gpus``: one number, or per strategy / pool mode, or per exact GPU id."""
    config = recipe.strategy_min_gpus
    if not isinstance(config, dict):
        return _floor_in(config, key)  # absent, one number, or unusable
    return max(_floor_in(config, key), _floor_in(config.get(hw_id), key) if hw_id else 0)


def nodes_for_strategy(recipe: Recipe, key: str, gpus_per_node: int | None, hw_id: str | None = None) -> int:
    return math.ceil(min_gpus_for_strategy(recipe, key, hw_id) / (gpus_per_node or 8)) or 1


def strategy_reachable(
    recipe: Recipe, key: str, deploy_type: str | None, gpus_per_node: int | None, hw_id: str | None = None
) -> bool:
    scales_out = deploy_type in ("multi_node", "pd_cluster")
    return (MAX_NODES if scales_out else 1) * (gpus_per_node or 8) >= min_gpus_for_strategy(recipe, key, hw_id)


def strategy_node_count(recipe: Recipe, strategy: str, strategy_doc: Strategy | None, profile: Profile,
                        hw_id: str) -> int:
    """Nodes to render a strategy at: two for multi-node, grown to clear its GPU floor."""
    usual = 2 if strategy_doc is not None and strategy_doc.deploy_type == "multi_node" else 1
    return max(usual, nodes_for_strategy(recipe, strategy, gpu_count(profile, 0) or None, hw_id))


def offered_strategies(recipe: Recipe, profile: Profile, hw_id: str, strategies: dict[str, Strategy]) -> list[str]:
    """Serving strategies offered on one hardware, in ``effective_compatible_strategies`` order:
    supported there (``strategy_hardware``), reachable under ``strategy_min_gpus``, and neither
    multi-node nor PD on hardware that cannot scale out."""
    scalable = hardware_scalable(profile)
    gpus = gpu_count(profile, 0) or None
    out = []
    for name in effective_compatible_strategies(recipe):
        deploy_type = doc.deploy_type if (doc := strategies.get(name)) is not None else None
        if deploy_type == "kv_store_lb":
            continue
        if not strategy_supported_on_hardware(recipe, name, profile, hw_id):
            continue
        if not strategy_reachable(recipe, name, deploy_type, gpus, hw_id):
            continue
        if scalable or (not name.startswith("multi_node_") and name != "pd_cluster"):
            out.append(name)
    return out


def pd_pool_modes(recipe: Recipe) -> list[str]:
    """PD pool parallelism families offered, read off the strategy ids' suffixes."""
    modes: set[str] = set()
    for name in effective_compatible_strategies(recipe):
        if name == "pd_cluster":
            continue
        if re.search(r"(?:^|_)dep$", name):
            modes.add("dep")
        elif re.search(r"(?:^|_)tep$", name):
            modes.add("tep")
        elif re.search(r"(?:^|_)tp(?:_pp|_dp)?$", name):
            modes.add("tp")
    ordered = [m for m in ("tp", "tep", "dep") if m in (modes or {"tp"})]
    restrict = recipe.strategy_override("pd_cluster").pool_modes
    if isinstance(restrict, list) and restrict:
        narrowed = [m for m in ordered if m in restrict]
        ordered = narrowed or ordered
    return ordered


def pd_role_parallelism(recipe: Recipe, strategy_doc: Strategy | None, role: str) -> str:
    declared = strategy_doc.role(role).parallelism if strategy_doc is not None else None
    return recipe.strategy_override("pd_cluster").role(role).parallelism or declared or "tp"


def pd_pool_nodes(
    profile: Profile, variant: Variant, recipe: Recipe, strategies: dict[str, Strategy], hw_id: str
) -> dict[str, int] | str | None:
    """Per-role node counts for a PD rendering: None = co-located, ``"skip"`` = too large."""
    if pd_fits_single_node(profile, variant, hw_id):
        return None
    node = node_vram_gb(profile)
    need = variant_vram_minimum_gb(variant, hw_id)
    if node <= 0 or need <= 0:
        return None
    per_role = math.ceil(need / node)
    if per_role > MAX_PD_NODES_PER_ROLE:
        return "skip"
    pd_doc = strategies.get("pd_cluster")
    return {
        role: max(per_role, nodes_for_strategy(recipe, pd_role_parallelism(recipe, pd_doc, role),
                                               gpu_count(profile, 0) or None, hw_id))
        for role in ("prefill", "decode")
    }


# ── features and modes ───────────────────────────────────────────────────────────────────


def default_features(recipe: Recipe, hw_id: str | None, variant_key: str = "default") -> list[str]:
    """All features minus opt-ins (recipe-wide and per hardware), plus those a variant forces."""
    opt_in = set(recipe.opt_in_features)
    opt_in.update((recipe.hardware_opt_in_features.get(hw_id) or []) if hw_id else [])
    variant = recipe.variant(variant_key)
    forced = set(variant.default_modes) if variant is not None else set()
    return [f for f in recipe.features if f in forced or f not in opt_in]


def feature_allowed_for_strategy(feature: Feature | None, strategy: str) -> bool:
    return feature is None or feature.allowed_for_strategy(strategy)


def mode_allowed_for_variant(mode: Mode | None, variant_key: str) -> bool:
    allowed = mode.variants if mode is not None else None
    return not isinstance(allowed, list) or not allowed or variant_key in allowed


def mode_supported_on_hardware(mode: Mode | None, profile: Profile | None, hw_id: str | None) -> bool:
    gate = mode.hardware if mode is not None else None
    if not isinstance(gate, dict):
        return True
    gens = generations(profile)[:1]
    if gens and gate.get(gens[0]) == "unsupported":
        return False
    return not (hw_id and gate.get(hw_id) == "unsupported")


def available_modes(feature: Feature, variant_key: str, profile: Profile | None, hw_id: str | None) -> list[str]:
    modes = feature.modes
    if modes is None:
        return []
    return [
        key for key, mode in modes.items()
        if mode_allowed_for_variant(mode, variant_key) and mode_supported_on_hardware(mode, profile, hw_id)
    ]


def resolve_mode(
    feature: Feature, feature_key: str, variant: Variant | None, variant_key: str,
    profile: Profile | None, hw_id: str | None, chosen: str | None = None,
) -> str | None:
    """The mode a modal feature runs: the user's pick, the variant's ``default_modes``, the
    feature's ``default_mode``, else the first mode allowed on this variant and hardware."""
    allowed = available_modes(feature, variant_key, profile, hw_id)
    if not allowed:
        return None
    forced = variant.default_modes.get(feature_key) if variant is not None else None
    for candidate in (chosen, forced, feature.default_mode):
        if candidate and candidate in allowed:
            return candidate
    return allowed[0]
