"""User choices + default rules -> a complete ``Selection``.

Two ways in: ``resolve_selection`` fills every unset choice from the default rules (the CLI
and the Python API), ``selection_from_request`` takes a complete batch request as given.
Unknown names are a ``SelectionError`` that lists the valid choices.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from servekit.catalog.domain import (
    EMPTY_VARIANT,
    Recipe,
    Strategy,
    kv_offload_keys,
    kv_offload_of,
    recipe_of,
    strategies_of,
    strategy_of,
)
from servekit.catalog.ids import canonical_id, closest_ids, unknown_model
from servekit.errors import ConflictError, SelectionError
from servekit.hardware import build_profiles
from servekit.synthesis import selection as rules
from servekit.synthesis.omni import is_omni, pick_task
from servekit.synthesis.plan import Selection

AUTO: Any = object()
"""``pd_nodes`` default: size PD pools from the default rules (``selection.pd_pool_nodes``)."""


def _check(kind: str, value: Any, valid: Iterable[str], where: str = "") -> str:
    if isinstance(value, str) and value in valid:
        return value
    raise unknown_name(kind, value, valid, where)


def unknown_name(kind: str, value: Any, valid: Iterable[str], where: str = "") -> SelectionError:
    """``unknown KIND 'value'; valid choices: ...`` (for a long list, the closest names)."""
    valid = list(valid)
    shown = ", ".join(valid)
    if len(valid) > 40:  # a long list: the names closest to the one given, else its start
        close = closest_ids(str(value), valid, n=8)
        shown = ", ".join(close) if close else ", ".join(valid[:40]) + f", ... ({len(valid)} in all)"
    place = f" for {where}" if where else ""
    return SelectionError(f"unknown {kind} {value!r}{place}; valid choices: {shown or '(none)'}")


def recipe_id_of(docs, name: Any) -> str:
    """The catalog's spelling of a recipe id (matched without regard to case); an unknown id is
    an ``UnknownIdError`` naming the closest ids."""
    rid = canonical_id(name, docs.recipes) if isinstance(name, str) else None
    if rid is None:
        raise unknown_model(str(name), docs.recipes)
    return rid


def recipe_doc(docs, recipe_id: str) -> dict[str, Any]:
    """The recipe's document; an unknown id is a SelectionError naming the closest ones."""
    return docs.recipes[recipe_id_of(docs, recipe_id)]


def known_recipe(docs, recipe_id: str) -> Recipe:
    """The typed recipe; an unknown id is a SelectionError naming the closest ones."""
    return recipe_of(docs, recipe_id_of(docs, recipe_id))


def _profiles(docs) -> dict[str, Any]:
    """``taxonomy.hardware_profiles`` as written: the entries the selection rules read. Their
    profiles are built here, once each and with their ids, so the rules that are handed a bare
    entry (``servekit.hardware.profile_of``) find them rather than building them again."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    build_profiles(profiles)
    return profiles


def _strategy_names(docs) -> list[str]:
    return [*docs.strategies, *docs.kv_store]


def parse_mode_pairs(values: Iterable[str]) -> dict[str, str]:
    """``--mode FEATURE=MODE`` options as ``{feature: mode}`` (names are checked later)."""
    modes: dict[str, str] = {}
    for value in values:
        feature, eq, mode = value.partition("=")
        if not eq or not feature or not mode:
            raise SelectionError(f"--mode {value!r} is not FEATURE=MODE", fix="e.g. --mode spec_decoding=dflash")
        modes[feature] = mode
    return modes


def _check_modes(recipe: Recipe, recipe_id: str, modes: dict[str, str]) -> tuple[tuple[str, str], ...]:
    for feature, mode in modes.items():
        _check("feature", feature, recipe.modal_features(), f"{recipe_id} (features with modes)")
        _check("mode", mode, list(recipe.features[feature].modes), f"{recipe_id} feature {feature}")
    return tuple(modes.items())


def _typed(request: dict[str, Any], key: str, kind: type, items: type, default: Any, what: str) -> Any:
    """``request[key]`` when it is a ``kind`` whose items (or values) are ``items``; else one clear error."""
    value = request.get(key)
    if value is None:
        return default
    members = value.values() if isinstance(value, dict) else value
    if isinstance(value, kind) and all(isinstance(m, items) and not isinstance(m, bool) for m in members):
        return value
    raise SelectionError(f"request field {key!r} must be {what}, not {json.dumps(value)}")


def _named(request: dict[str, Any], key: str) -> Any:
    if request.get(key) is None:
        raise SelectionError(f"request has no {key!r}; a batch line names every choice "
                             "(recipe, hardware, strategy; variant, node_count, features, modes optional)")
    return request[key]


def selection_from_request(docs, request: dict[str, Any]) -> Selection:
    """A batch request: recipe, hardware, variant, strategy, node_count, features, modes.

    ``features`` is the complete enabled set (``[]``: none); without it (or null) the recipe's
    default features, as ``servekit plan`` runs them."""
    recipe_id = _named(request, "recipe")
    if not isinstance(recipe_id, str):
        raise SelectionError(f"request field 'recipe' must be a recipe id string, not {json.dumps(recipe_id)}")
    recipe_id = recipe_id_of(docs, recipe_id)
    recipe = known_recipe(docs, recipe_id)
    hardware = _check("hardware", _named(request, "hardware"), _profiles(docs))
    variant = _check("variant", request.get("variant") or "default", recipe.variants, recipe_id)
    strategy = _check("strategy", _named(request, "strategy"), _strategy_names(docs))
    node_count = request.get("node_count", 1)
    if not isinstance(node_count, int) or isinstance(node_count, bool) or not 1 <= node_count <= rules.MAX_NODES:
        raise SelectionError(f"node_count must be a whole number from 1 to {rules.MAX_NODES}, not {node_count!r}")
    features = _typed(request, "features", list, str, None, "a list of feature names")
    if features is None:  # no "features": the recipe's defaults; [] means none
        features = rules.default_features(recipe, hardware, variant)
    modes = _typed(request, "modes", dict, str, {}, "an object of FEATURE: MODE names")
    pd_nodes = _typed(request, "pd_nodes", dict, int, None, "an object of role: node count")
    for feature in features:
        _check("feature", feature, recipe.features, recipe_id)
    kept, notes = rules.apply_exclusions(recipe, list(features))
    kv = request.get("kv_offload")
    if kv is not None:
        _check("kv offload option", kv, kv_offload_keys(docs))
    return Selection(
        recipe_id=recipe_id, hardware=hardware, variant=variant, strategy=strategy, node_count=node_count,
        features=tuple(kept), modes=_check_modes(recipe, recipe_id, modes),
        kv_offload=kv, notes=tuple(notes), dropped_features=tuple(f for f in features if f not in kept),
        pd_nodes=None if pd_nodes is None else tuple(pd_nodes.items()),
        engine=str(request.get("engine") or "vllm"),
    )


def _check_nodes(docs, recipe: Recipe, strategy: str, profile: dict, hardware: str, nodes: int) -> None:
    if not 1 <= nodes <= rules.MAX_NODES:
        raise SelectionError(f"node count must be from 1 to {rules.MAX_NODES}, not {nodes}")
    deploy_type = _serving_deploy_type(docs, strategy)
    if nodes > 1 and deploy_type == "single_node":
        multi = [s for s in rules.offered_strategies(recipe, profile, hardware, strategies_of(docs))
                 if _serving_deploy_type(docs, s) == "multi_node"]
        if not multi:
            raise SelectionError(f"{strategy} runs on one node, and this recipe offers no multi-node strategy "
                                 f"on {hardware}", fix="drop --nodes (one node)")
        raise SelectionError(f"{strategy} runs on one node, not {nodes}",
                             fix=f"pick a multi-node strategy this recipe offers on {hardware}: "
                                 + ", ".join(f"--strategy {s}" for s in multi) + "; or drop --nodes")
    if nodes > 1 and not rules.hardware_scalable(profile):
        raise SelectionError(f"{hardware} cannot join a multi-node deployment (scalable: false)")
    floor = rules.nodes_for_strategy(recipe, strategy, profile.get("gpu_count"), hardware)
    if deploy_type == "multi_node" and nodes < floor:
        raise SelectionError(f"{strategy} needs at least {floor} nodes of {hardware} (strategy_min_gpus)",
                             fix=f"--nodes {floor}, or leave --nodes out")


def _serving_deploy_type(docs, strategy: str) -> Any:
    """The deploy type of a serving strategy (None for an unknown name or a KV-store deployment)."""
    return strategy_of(docs, strategy).deploy_type if docs.strategies.get(strategy) else None


def _serving(docs, strategy: str) -> Strategy | None:
    """A serving strategy by name (None for an unknown name or a KV-store deployment)."""
    return strategy_of(docs, strategy) if docs.strategies.get(strategy) else None


def _check_kv_offload(docs, recipe: Recipe, key: str, strategy: str, hardware: str) -> None:
    """A chosen KV-offload option must apply here; the plan never drops it silently."""
    _check("kv offload option", key, kv_offload_keys(docs))
    profile = _profiles(docs).get(hardware) or {}
    if key in docs.kv_store:
        if not rules.kv_store_brand_supported(profile):
            raise SelectionError(f"{key} needs NVIDIA or AMD GPUs (Mooncake has no build for {hardware})")
        return
    option, strategy_doc = kv_offload_of(docs, key), _serving(docs, strategy)
    if not rules.kv_offload_allowed(option, strategy, strategy_doc):
        raise SelectionError(f"kv offload {key} does not compose with strategy {strategy}")
    if not rules.kv_offload_supported(option, key, recipe, profile):
        raise SelectionError(f"kv offload {key} is not offered for this recipe on {hardware} "
                             "(opted out, not verified for an opt-in option, or a brand it does not support)")


def recommended_layout(docs, recipe: Recipe, variant_key: str, hw_id: str, nodes: int = 1) -> tuple[str, int]:
    """(strategy, node_count) the reference recommends for a variant on a hardware; ``nodes`` above 1
    (the user's own node count) asks for a strategy that spans that many machines."""
    profiles = _profiles(docs)
    profile = profiles.get(hw_id) or {}
    variant = recipe.variant(variant_key)
    strategies = strategies_of(docs)
    compatible = rules.offered_strategies(recipe, profile, hw_id, strategies)
    multi = rules.hardware_scalable(profile) and any(s.startswith("multi_node_") for s in compatible)
    base = 2 if not rules.fits_single_node(profile, variant, hw_id) and multi else 1
    chosen = rules.recommended_strategy(recipe, profile, max(base, nodes), compatible)
    if chosen not in compatible:
        chosen = next((s for s in compatible if s != "pd_cluster"), compatible[0] if compatible else chosen)
    nodes = max(base, rules.strategy_node_count(recipe, chosen, strategies.get(chosen), profile, hw_id))
    return chosen, nodes


def resolve_selection(
    docs, recipe_id: str, *, hardware: str | None = None, variant: str | None = None,
    strategy: str | None = None, node_count: int | None = None, enable: Iterable[str] = (),
    disable: Iterable[str] = (), modes: dict[str, str] | None = None, kv_offload: str | None = None,
    features: Iterable[str] | None = None, pd_nodes: dict[str, int] | None = AUTO, engine: str = "vllm",
    omni_task: str | None = AUTO,
) -> Selection:
    """Fill every unset choice from the default rules, then validate the result.

    ``features`` is the complete enabled set (defaults are then not consulted); otherwise the
    default features are adjusted by ``enable`` / ``disable`` (and by every feature ``modes``
    names). ``pd_nodes`` sizes PD pools per role: None = co-located on one node; left unset,
    the default rules size them from the variant's VRAM floor. ``omni_task`` picks a vLLM-Omni
    task (left unset: the first task of an omni recipe; None: a plain serve plan).
    """
    recipe_id = recipe_id_of(docs, recipe_id)
    recipe = known_recipe(docs, recipe_id)
    profiles = _profiles(docs)
    if variant is not None:
        _check("variant", variant, recipe.variants, recipe_id)
    if hardware is None:
        hardware = rules.default_hardware(profiles, recipe, variant or "default")
    _check("hardware", hardware, profiles)
    profile = profiles[hardware]
    variant, notes = _choose_variant(profiles, recipe, recipe_id, variant, hardware)
    if strategy is None:
        strategy, default_nodes = recommended_layout(docs, recipe, variant, hardware, node_count or 1)
    else:
        offered = rules.effective_compatible_strategies(recipe) or list(docs.strategies)
        if strategy not in offered and strategy in docs.kv_store:
            raise SelectionError(f"{strategy} is a KV-store deployment: pass it as --kv-offload {strategy}")
        _check("strategy", strategy, offered, f"{recipe_id} (strategies it offers)")
        default_nodes = rules.strategy_node_count(recipe, strategy, _serving(docs, strategy), profile, hardware)
    nodes = node_count if node_count is not None else default_nodes
    _check_nodes(docs, recipe, strategy, profile, hardware, nodes)
    checked_modes = _check_modes(recipe, recipe_id, dict(modes or {}))
    enabled = _choose_features(recipe, recipe_id, hardware, variant, features, enable, disable, dict(checked_modes))
    kept, exclusion_notes = rules.apply_exclusions(recipe, enabled)
    for feature, mode in checked_modes:
        allowed = rules.available_modes(recipe.features[feature], variant, profile, hardware)
        if mode not in allowed:
            raise SelectionError(f"mode {mode!r} of {feature} is not available for variant {variant} on {hardware}; "
                                 f"valid choices: {', '.join(allowed) or '(none)'}")
    if pd_nodes is AUTO:
        pd_nodes = _default_pd_nodes(docs, recipe, recipe_id, strategy, variant, hardware)
    if kv_offload is not None:
        _check_kv_offload(docs, recipe, kv_offload, strategy, hardware)
    return Selection(
        recipe_id=recipe_id, hardware=hardware, variant=variant, strategy=strategy, node_count=nodes,
        features=tuple(kept), modes=checked_modes, kv_offload=kv_offload, engine=engine,
        notes=tuple(notes + exclusion_notes), dropped_features=tuple(f for f in enabled if f not in kept),
        pd_nodes=None if pd_nodes is None else tuple((k, int(v)) for k, v in pd_nodes.items()),
        omni_task=_choose_omni_task(recipe, recipe_id, omni_task),
    )


def _require_runs(profiles, recipe: Recipe, recipe_id: str, variant: str, hardware: str) -> None:
    if not rules.hardware_allowed(profiles, recipe, recipe.variants[variant], hardware):
        valid = rules.compatible_hardware(profiles, recipe, variant)
        raise SelectionError(f"variant {variant!r} of {recipe_id} does not run on {hardware!r}; "
                             f"valid hardware: {', '.join(valid) or '(none)'}")


def variant_runs(docs, recipe_id: str, variant: str | None, hardware: str) -> bool:
    """Whether ``require_variant_runs`` lets the variant run on the hardware."""
    try:
        require_variant_runs(docs, recipe_id, variant, hardware)
    except SelectionError:
        return False
    return True


def require_variant_runs(docs, recipe_id: str, variant: str | None, hardware: str) -> None:
    """A SelectionError when the recipe's variant (its default when None) cannot run on the
    hardware (its precision, the recipe's or the variant's hardware list): the check a plan makes,
    for a launch whose layout the user names (``fit``/``perf`` with ``--tp``)."""
    profiles = _profiles(docs)
    if hardware not in profiles:
        return  # an unknown profile is refused where it is read
    recipe = known_recipe(docs, recipe_id)
    key = variant or ("default" if "default" in recipe.variants else next(iter(recipe.variants), None))
    if key is None or key not in recipe.variants:
        return  # an unknown variant is refused by the model resolver with the valid ones
    _require_runs(profiles, recipe, recipe_id, key, hardware)


def _choose_variant(profiles, recipe: Recipe, recipe_id: str, variant: str | None, hardware: str):
    """(variant, notes): an explicit variant must run here; the default one falls back to
    the largest variant that does (e.g. BF16 -> FP8 on a single-GPU workstation)."""
    variants = recipe.variants
    profile = profiles[hardware]
    if variant is not None:
        _require_runs(profiles, recipe, recipe_id, variant, hardware)
        return variant, []
    variant = "default" if "default" in variants else next(iter(variants), "default")
    runs = rules.variant_runs_on_hardware(profile, variants.get(variant) or EMPTY_VARIANT, hardware)
    if runs and (rules.hardware_scalable(profile) or rules.fits_single_node(profile, variants.get(variant), hardware)):
        return variant, []
    fitting = rules.fitting_variant(recipe, profile, hardware)
    if fitting and fitting != variant:
        return fitting, [f"variant {fitting} chosen: {variant} does not run on {hardware}"]
    return variant, []


def _choose_features(recipe: Recipe, recipe_id: str, hardware: str, variant: str, features, enable, disable,
                     modes: dict[str, str]) -> list[str]:
    """Enabled features in choice order: defaults (or the given set), then each enabled one."""
    keys = list(recipe.features)
    base = list(features) if features is not None else rules.default_features(recipe, hardware, variant)
    for name in [*base, *enable, *disable]:
        _check("feature", name, keys, recipe_id)
    conflict = rules.conflicting_requests(recipe, list(enable), list(disable), modes)
    if conflict:
        raise ConflictError(f"{recipe_id}: {conflict}", fix="keep one of the two")
    disabled = set(disable)
    enabled = [f for f in base if f not in disabled]
    for name in [*enable, *[m for m in modes if m not in enable]]:
        if name in enabled:
            enabled.remove(name)
        if name not in disabled:
            enabled.append(name)
    return enabled


def _default_pd_nodes(docs, recipe: Recipe, recipe_id: str, strategy: str, variant: str, hardware: str):
    if _serving_deploy_type(docs, strategy) != "pd_cluster":
        return None
    profile = _profiles(docs)[hardware]
    sized = rules.pd_pool_nodes(profile, recipe.variants.get(variant) or EMPTY_VARIANT, recipe,
                                strategies_of(docs), hardware)
    if sized == "skip":
        raise SelectionError(f"pd_cluster for {recipe_id} {variant} on {hardware} would need more than "
                             f"{rules.MAX_PD_NODES_PER_ROLE} nodes per role",
                             fix="pick larger hardware or a smaller variant")
    return sized


def _choose_omni_task(recipe: Recipe, recipe_id: str, omni_task: Any) -> str | None:
    if omni_task is AUTO:
        return pick_task(recipe, None).key if is_omni(recipe) else None
    if omni_task is None:
        return None
    if not is_omni(recipe):
        raise SelectionError(f"{recipe_id} is not a vLLM-Omni recipe; it has no tasks to pick")
    return pick_task(recipe, omni_task).key
