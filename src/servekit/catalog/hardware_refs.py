"""Checks that every hardware key or value in a recipe names something in the taxonomy.

A hardware lookup is an exact string match, so a misspelled key is silently inert: an
override never applies, and an intended ``unsupported`` never disables anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from servekit.catalog.issues import error, warning
from servekit.catalog.positioned import KeyPath
from servekit.catalog.vocabulary import (
    ARCH_PREFIX,
    CatalogVocabulary,
    HardwareVocabulary,
    as_list,
    as_map,
    sample,
    suggest,
)
from servekit.findings import Finding


def _layered(hw: HardwareVocabulary, mapping: Any, at: KeyPath) -> Iterator[Finding]:
    for key in as_map(mapping):
        if not hw.is_layered(key):
            yield error(
                at + (key,),
                f"unknown hardware key '{key}': not a hardware profile, generation, brand or "
                f"'default', so this entry never applies{suggest(key, hw.layered)}",
                hw.layered_hint(),
                "unknown-hardware",
                at_key=True,
            )


def _exact_problem(hw: HardwareVocabulary, key: str) -> str | None:
    if key in hw.profiles:
        return None
    kind = hw.kind_of(key)
    if kind:
        return f"'{key}' is a {kind}, but this takes exact hardware profile ids only"
    return f"unknown hardware profile '{key}'{suggest(key, hw.profiles)}"


def _exact_keys(hw: HardwareVocabulary, mapping: Any, at: KeyPath) -> Iterator[Finding]:
    for key in as_map(mapping):
        problem = _exact_problem(hw, key)
        if problem:
            yield error(at + (key,), problem, hw.profile_hint(), "unknown-hardware", at_key=True)


def _meta_hardware(hw: HardwareVocabulary, meta: dict) -> Iterator[Finding]:
    for key, status in as_map(meta.get("hardware")).items():
        problem = _exact_problem(hw, key)
        if not problem:
            continue
        if status == "unsupported":
            yield error(
                ("meta", "hardware", key),
                f"{problem}; the 'unsupported' mark disables nothing",
                hw.profile_hint(),
                "unknown-hardware",
                at_key=True,
            )
        else:
            yield warning(
                ("meta", "hardware", key),
                f"{problem}; its '{status}' badge is never shown",
                f"{hw.profile_hint()}, or add the profile to taxonomy.yaml",
                "unknown-hardware",
                at_key=True,
            )


def _supported_hardware(hw: HardwareVocabulary, variant_key: str, variant: dict) -> Iterator[Finding]:
    at = ("variants", variant_key, "supported_hardware")
    for i, key in enumerate(as_list(variant.get("supported_hardware"))):
        if not isinstance(key, str) or hw.is_selector(key):
            continue
        if key.startswith(ARCH_PREFIX):
            arch = key[len(ARCH_PREFIX) :]
            yield error(
                at + (i,),
                f"unknown compute architecture '{arch}' in selector '{key}'{suggest(arch, hw.compute_archs)}",
                "use arch:<compute_arch> with a compute_arch some hardware profile declares"
                + (f" ({sample(hw.compute_archs)})" if hw.compute_archs else ""),
                "unknown-hardware",
            )
        else:
            yield error(
                at + (i,),
                _exact_problem(hw, key) or key,
                f"{hw.profile_hint()} or an arch:<compute_arch> selector",
                "unknown-hardware",
            )


def _precision_hardware(hw: HardwareVocabulary, variant_key: str, variant: dict) -> Iterator[Finding]:
    ph = as_map(variant.get("precision_hardware"))
    at = ("variants", variant_key, "precision_hardware")
    gen = ph.get("generation")
    if isinstance(gen, str) and gen not in hw.generations:
        yield error(
            at + ("generation",),
            f"unknown generation '{gen}'{suggest(gen, hw.generations)}",
            f"use a generation from taxonomy.yaml ({sample(hw.generations)})",
            "unknown-hardware",
        )
    brand = ph.get("brand")
    if isinstance(brand, str) and brand.lower() not in hw.brands:
        yield error(
            at + ("brand",),
            f"unknown brand '{brand}'{suggest(brand.lower(), hw.brands)}",
            f"use a brand from taxonomy.yaml ({sample(hw.brands)})",
            "unknown-hardware",
        )


def _layered_in(hw: HardwareVocabulary, block: Any, at: KeyPath, *keys: str) -> Iterator[Finding]:
    """Check the hardware-keyed mappings at ``keys`` of one block, in that order."""
    block = as_map(block)
    for key in keys:
        yield from _layered(hw, block.get(key), at + (key,))


def _variant(hw: HardwareVocabulary, key: str, variant: dict) -> Iterator[Finding]:
    yield from _supported_hardware(hw, key, variant)
    yield from _precision_hardware(hw, key, variant)
    yield from _layered_in(hw, variant, ("variants", key), "hardware_overrides", "tp")


def _features(hw: HardwareVocabulary, features: dict) -> Iterator[Finding]:
    for fkey, feature in features.items():
        at = ("features", fkey)
        yield from _layered_in(hw, feature, at, "hardware", "hardware_overrides")
        for mkey, mode in as_map(as_map(feature).get("modes")).items():
            yield from _layered_in(hw, mode, at + ("modes", mkey), "hardware", "hardware_overrides")


def _strategy_overrides(hw: HardwareVocabulary, overrides: dict) -> Iterator[Finding]:
    for skey, override in overrides.items():
        at = ("strategy_overrides", skey)
        yield from _layered_in(hw, override, at, "tp", "hardware_overrides")
        for role in ("prefill", "decode"):
            yield from _layered_in(hw, as_map(override).get(role), at + (role,), "nodes", "hardware_overrides")


def _dependency_brands(hw: HardwareVocabulary, recipe: dict) -> Iterator[Finding]:
    for i, dep in enumerate(as_list(recipe.get("dependencies"))):
        brand = as_map(dep).get("brand")
        for j, name in (((None, brand),) if isinstance(brand, str) else enumerate(as_list(brand))):
            if not isinstance(name, str) or name.lower() in hw.brands:
                continue
            yield error(
                ("dependencies", i, "brand") + (() if j is None else (j,)),
                f"unknown brand '{name}'{suggest(name.lower(), hw.brands)}",
                f"use a brand from taxonomy.yaml ({sample(hw.brands)})",
                "unknown-hardware",
            )


def hardware_issues(recipe: dict, vocab: CatalogVocabulary) -> Iterator[Finding]:
    hw = vocab.hardware
    meta = as_map(recipe.get("meta"))
    default_hw = meta.get("default_hardware")
    if isinstance(default_hw, str) and _exact_problem(hw, default_hw):
        yield error(
            ("meta", "default_hardware"),
            _exact_problem(hw, default_hw) or "",
            hw.profile_hint(),
            "unknown-hardware",
        )
    yield from _meta_hardware(hw, meta)
    yield from _exact_keys(hw, recipe.get("hardware_opt_in_features"), ("hardware_opt_in_features",))
    yield from _exact_keys(hw, recipe.get("hardware_notes"), ("hardware_notes",))
    for kv_id, mapping in as_map(recipe.get("kv_cache_strategy_hardware")).items():
        yield from _exact_keys(hw, mapping, ("kv_cache_strategy_hardware", kv_id))
    strategy_ids = vocab.strategies | vocab.kv_stores
    for key in as_map(recipe.get("strategy_min_gpus")):
        if key not in strategy_ids and key not in hw.profiles:
            yield error(
                ("strategy_min_gpus", key),
                f"'{key}' is neither a strategy nor a hardware profile"
                f"{suggest(key, strategy_ids | hw.profiles)}",
                "key strategy_min_gpus by a strategy id or an exact hardware profile id",
                "unknown-reference",
                at_key=True,
            )
    yield from _layered(hw, recipe.get("hardware_overrides"), ("hardware_overrides",))
    for skey, mapping in as_map(recipe.get("strategy_hardware")).items():
        yield from _layered(hw, mapping, ("strategy_hardware", skey))
    for vkey, variant in as_map(recipe.get("variants")).items():
        yield from _variant(hw, vkey, as_map(variant))
    yield from _features(hw, as_map(recipe.get("features")))
    yield from _strategy_overrides(hw, as_map(recipe.get("strategy_overrides")))
    for i, task in enumerate(as_list(as_map(recipe.get("omni")).get("tasks"))):
        yield from _layered(
            hw, as_map(task).get("hardware_overrides"), ("omni", "tasks", i, "hardware_overrides")
        )
    yield from _dependency_brands(hw, recipe)
