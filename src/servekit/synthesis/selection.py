"""Every default rule of the catalog, in one place: default hardware, fitting variant,
recommended strategy, offered strategies and node counts, default and forced features, mode
resolution. Feature exclusions (``exclusions``) and KV-offload gates (``kv_offload``) live in
their own modules and are re-exported here. Pure functions over plain catalog documents.
"""

from __future__ import annotations

import math
import re
from typing import Any

from servekit.synthesis.hardware import (  # noqa: F401 - hardware predicates are part of this API
    KV_STORE_BRANDS,
    PRECISION_CONSTRAINTS,
    Profile,
    brand,
    generations,
    gpu_count,
    hardware_scalable,
    hardware_supported,
    hardware_visible,
    kv_store_brand_supported,
    layered_value,
    matches_constraint,
    node_vram_gb,
    precision_compatible,
    precision_constraint,
    variant_hardware_supported,
)
from servekit.synthesis.exclusions import apply_exclusions, exclusive_with  # noqa: F401 - part of this API
from servekit.synthesis.kv_offload import (  # noqa: F401 - part of this API
    kv_offload_allowed,
    kv_offload_supported,
    kv_store_offered,
    strategy_allows_kv_offload,
)

Doc = dict[str, Any]

MAX_NODES = 16
"""Most nodes one deployment (or one PD pool) may span."""

MAX_PD_NODES_PER_ROLE = 4
"""A PD rendering that would need more nodes per role than this is not offered."""

PREFERRED_MULTI_NODE = ("multi_node_tp", "multi_node_dep", "multi_node_tep")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


# ── hardware ─────────────────────────────────────────────────────────────────────────────


def hardware_allowed(profiles: dict[str, Profile], recipe: Doc, variant: Doc | None, hw_id: str) -> bool:
    profile = profiles.get(hw_id) or {}
    return (
        precision_compatible(profile, variant)
        and hardware_supported(recipe, hw_id)
        and variant_hardware_supported(variant, hw_id, profile)
    )


def compatible_hardware(profiles: dict[str, Profile], recipe: Doc, variant_key: str = "default") -> list[str]:
    """Profiles a variant may render on (precision, recipe opt-outs, variant allowlist)."""
    variant = (recipe.get("variants") or {}).get(variant_key)
    return [hw for hw in profiles if hardware_allowed(profiles, recipe, variant, hw)]


def default_hardware(profiles: dict[str, Profile], recipe: Doc, variant_key: str = "default") -> str:
    """The landing hardware: the author's pick, else B200/GB200 for Blackwell-only, else H200."""
    variant = (recipe.get("variants") or {}).get(variant_key)
    constraint = precision_constraint(variant)
    candidates = [
        hw
        for hw in compatible_hardware(profiles, recipe, variant_key)
        if hardware_visible(profiles[hw], hw, recipe)
    ]
    authored = (recipe.get("meta") or {}).get("default_hardware")
    if authored and authored in candidates:
        return authored
    if constraint and constraint.get("generation") == "blackwell":
        for hw in ("b200", "gb200"):
            if hw in candidates:
                return hw
    if "h200" in candidates:
        return "h200"
    order = {"NVIDIA": 0, "AMD": 1}
    candidates.sort(key=lambda hw: (order.get(brand(profiles[hw]) or "", 9), hw))
    return candidates[0] if candidates else "h200"


# ── variants and VRAM ────────────────────────────────────────────────────────────────────


def variant_vram_minimum_gb(variant: Doc | None, hw_id: str | None = None) -> float:
    """A variant's VRAM floor; ``hardware_overrides.<hw>.vram_minimum_gb`` wins for that GPU."""
    variant = variant or {}
    override = ((variant.get("hardware_overrides") or {}).get(hw_id) or {}) if hw_id else {}
    if _number(override.get("vram_minimum_gb")) > 0:
        return _number(override["vram_minimum_gb"])
    return _number(variant.get("vram_minimum_gb"))


def fits_single_node(profile: Profile | None, variant: Doc | None, hw_id: str | None = None) -> bool:
    """Missing size information counts as a fit (incomplete metadata never blocks)."""
    node = node_vram_gb(profile)
    need = variant_vram_minimum_gb(variant, hw_id)
    return need <= 0 or node <= 0 or need <= node


def pd_fits_single_node(profile: Profile | None, variant: Doc | None, hw_id: str | None = None) -> bool:
    """Co-located PD halves the node: it needs two GPUs and twice the model's VRAM."""
    if not profile or variant is None:
        return False
    if gpu_count(profile, 0) < 2:
        return False
    return node_vram_gb(profile) >= 2 * variant_vram_minimum_gb(variant, hw_id)


def variant_runs_on_hardware(profile: Profile, variant: Doc, hw_id: str | None = None) -> bool:
    if not precision_compatible(profile, variant):
        return False
    if hw_id and not variant_hardware_supported(variant, hw_id, profile):
        return False
    return hardware_scalable(profile) or fits_single_node(profile, variant, hw_id)


def fitting_variant(recipe: Doc, profile: Profile, hw_id: str | None = None) -> str | None:
    """The largest-footprint variant that runs here (for non-scalable hardware)."""
    fitting = [
        (key, v)
        for key, v in (recipe.get("variants") or {}).items()
        if variant_runs_on_hardware(profile, v or {}, hw_id)
    ]
    if not fitting:
        return None
    best = max(fitting, key=lambda kv: _number((kv[1] or {}).get("vram_minimum_gb")))
    top = _number((best[1] or {}).get("vram_minimum_gb"))
    return next(k for k, v in fitting if _number((v or {}).get("vram_minimum_gb")) == top)


# ── strategies and node counts ───────────────────────────────────────────────────────────


def effective_compatible_strategies(recipe: Doc) -> list[str]:
    """``compatible_strategies`` plus strategies granted ``supported`` in ``strategy_hardware``."""
    listed = list(recipe.get("compatible_strategies") or [])
    grants = [
        name
        for name, gate in (recipe.get("strategy_hardware") or {}).items()
        if name not in listed and isinstance(gate, dict) and "supported" in gate.values()
    ]
    return listed + grants


def strategy_supported_on_hardware(recipe: Doc, strategy: str, profile: Profile | None, hw_id: str | None) -> bool:
    gate = layered_value((recipe.get("strategy_hardware") or {}).get(strategy), profile, hw_id)
    if gate is not None:
        return gate != "unsupported"
    return strategy in (recipe.get("compatible_strategies") or [])


def recommended_strategy(recipe: Doc, profile: Profile | None = None, node_count: int = 1) -> str:
    """Tensor parallel first, unless the recipe names a ``default_strategy`` it offers."""
    compatible = effective_compatible_strategies(recipe)
    explicit = recipe.get("default_strategy")
    if explicit and explicit in compatible:
        if node_count > 1 and explicit.startswith("single_node_"):
            sibling = "multi_node_" + explicit[len("single_node_"):]
            if sibling in compatible:
                return sibling
        else:
            return explicit
    if node_count > 1:
        for name in PREFERRED_MULTI_NODE:
            if name in compatible:
                return name
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


def min_gpus_for_strategy(recipe: Doc, key: str, hw_id: str | None = None) -> float:
    """``strategy_min_gpus``: one number, or per strategy / pool mode, or per exact GPU id."""
    config = recipe.get("strategy_min_gpus")
    if not isinstance(config, dict):
        return _floor_in(config, key)  # absent, one number, or unusable
    return max(_floor_in(config, key), _floor_in(config.get(hw_id), key) if hw_id else 0)


def nodes_for_strategy(recipe: Doc, key: str, gpus_per_node: int | None, hw_id: str | None = None) -> int:
    return math.ceil(min_gpus_for_strategy(recipe, key, hw_id) / (gpus_per_node or 8)) or 1


def strategy_reachable(
    recipe: Doc, key: str, deploy_type: str | None, gpus_per_node: int | None, hw_id: str | None = None
) -> bool:
    scales_out = deploy_type in ("multi_node", "pd_cluster")
    return (MAX_NODES if scales_out else 1) * (gpus_per_node or 8) >= min_gpus_for_strategy(recipe, key, hw_id)


def strategy_node_count(recipe: Doc, strategy: str, strategy_doc: Doc | None, profile: Profile, hw_id: str) -> int:
    """Nodes to render a strategy at: two for multi-node, grown to clear its GPU floor."""
    usual = 2 if (strategy_doc or {}).get("deploy_type") == "multi_node" else 1
    return max(usual, nodes_for_strategy(recipe, strategy, gpu_count(profile, 0) or None, hw_id))


def offered_strategies(recipe: Doc, profile: Profile, hw_id: str, strategies: dict[str, Doc]) -> list[str]:
    """Serving strategies offered on one hardware, in ``effective_compatible_strategies`` order:
    supported there (``strategy_hardware``), reachable under ``strategy_min_gpus``, and neither
    multi-node nor PD on hardware that cannot scale out."""
    scalable = hardware_scalable(profile)
    gpus = gpu_count(profile, 0) or None
    out = []
    for name in effective_compatible_strategies(recipe):
        doc = strategies.get(name) or {}
        if doc.get("deploy_type") == "kv_store_lb":
            continue
        if not strategy_supported_on_hardware(recipe, name, profile, hw_id):
            continue
        if not strategy_reachable(recipe, name, doc.get("deploy_type"), gpus, hw_id):
            continue
        if scalable or (not name.startswith("multi_node_") and name != "pd_cluster"):
            out.append(name)
    return out


def pd_pool_modes(recipe: Doc) -> list[str]:
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
    restrict = ((recipe.get("strategy_overrides") or {}).get("pd_cluster") or {}).get("pool_modes")
    if isinstance(restrict, list) and restrict:
        narrowed = [m for m in ordered if m in restrict]
        ordered = narrowed or ordered
    return ordered


def pd_role_parallelism(recipe: Doc, strategy_doc: Doc | None, role: str) -> str:
    override = (((recipe.get("strategy_overrides") or {}).get("pd_cluster") or {}).get(role) or {})
    return override.get("parallelism") or ((strategy_doc or {}).get(role) or {}).get("parallelism") or "tp"


def pd_pool_nodes(
    profile: Profile, variant: Doc, recipe: Doc, strategies: dict[str, Doc], hw_id: str
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


def default_features(recipe: Doc, hw_id: str | None, variant_key: str = "default") -> list[str]:
    """All features minus opt-ins (recipe-wide and per hardware), plus those a variant forces."""
    opt_in = set(recipe.get("opt_in_features") or [])
    opt_in.update(((recipe.get("hardware_opt_in_features") or {}).get(hw_id) or []) if hw_id else [])
    variant = (recipe.get("variants") or {}).get(variant_key) or {}
    forced = set((variant.get("default_modes") or {}).keys())
    return [f for f in (recipe.get("features") or {}) if f in forced or f not in opt_in]


def feature_allowed_for_strategy(feature: Doc | None, strategy: str) -> bool:
    allowed = (feature or {}).get("strategies")
    return not isinstance(allowed, list) or not allowed or strategy in allowed


def mode_allowed_for_variant(mode: Doc | None, variant_key: str) -> bool:
    allowed = (mode or {}).get("variants")
    return not isinstance(allowed, list) or not allowed or variant_key in allowed


def mode_supported_on_hardware(mode: Doc | None, profile: Profile | None, hw_id: str | None) -> bool:
    gate = (mode or {}).get("hardware")
    if not isinstance(gate, dict):
        return True
    gens = generations(profile)[:1]
    if gens and gate.get(gens[0]) == "unsupported":
        return False
    return not (hw_id and gate.get(hw_id) == "unsupported")


def available_modes(feature: Doc, variant_key: str, profile: Profile | None, hw_id: str | None) -> list[str]:
    modes = feature.get("modes")
    if not isinstance(modes, dict):
        return []
    return [
        key for key, mode in modes.items()
        if mode_allowed_for_variant(mode, variant_key) and mode_supported_on_hardware(mode, profile, hw_id)
    ]


def resolve_mode(
    feature: Doc, feature_key: str, variant: Doc | None, variant_key: str,
    profile: Profile | None, hw_id: str | None, chosen: str | None = None,
) -> str | None:
    """The mode a modal feature runs: the user's pick, the variant's ``default_modes``, the
    feature's ``default_mode``, else the first mode allowed on this variant and hardware."""
    allowed = available_modes(feature, variant_key, profile, hw_id)
    if not allowed:
        return None
    for candidate in (chosen, ((variant or {}).get("default_modes") or {}).get(feature_key),
                      feature.get("default_mode")):
        if candidate and candidate in allowed:
            return candidate
    return allowed[0]
