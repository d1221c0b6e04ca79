"""Checks over a recipe's features, their modes and the variants that select them."""

from __future__ import annotations

from collections.abc import Iterator

from servekit.catalog.issues import error
from servekit.catalog.vocabulary import as_list, as_map, sample, suggest
from servekit.findings import Finding


def _modes_of(feature: dict) -> dict | None:
    modes = feature.get("modes")
    return modes if isinstance(modes, dict) else None


def _mode_allows(mode: dict, variant: str) -> bool:
    allow = as_map(mode).get("variants")
    return not isinstance(allow, list) or not allow or variant in allow


def _feature_modes(fkey: str, feature: dict, variants: dict) -> Iterator[Finding]:
    at = ("features", fkey)
    if "modes" not in feature:
        if feature.get("default_mode") is not None:
            yield error(
                at + ("default_mode",),
                f"feature '{fkey}' has a default_mode but no modes",
                "add a modes map, or remove default_mode",
                "mode-reference",
            )
        return
    modes = _modes_of(feature)
    if not modes:
        yield error(
            at + ("modes",),
            f"features.{fkey}.modes must be a non-empty mapping of modes",
            "add at least one mode with its args, or drop modes and use flat args",
            "modes-empty",
        )
        return
    if feature.get("args") is not None:
        yield error(
            at + ("args",),
            f"feature '{fkey}' declares both flat args and modes; one would silently shadow the other",
            "move the args into a mode (or delete them) and keep only modes",
            "args-and-modes",
            at_key=True,
        )
    default_mode = feature.get("default_mode")
    if isinstance(default_mode, str) and default_mode not in modes:
        yield error(
            at + ("default_mode",),
            f"default_mode '{default_mode}' is not a mode of '{fkey}'{suggest(default_mode, modes)}",
            f"use one of: {sample(modes)}",
            "mode-reference",
        )
    for mkey, mode in modes.items():
        for i, vkey in enumerate(as_list(as_map(mode).get("variants"))):
            if not isinstance(vkey, str) or vkey not in variants:
                yield error(
                    at + ("modes", mkey, "variants", i),
                    f"mode '{mkey}' names unknown variant '{vkey}'{suggest(str(vkey), variants)}",
                    f"use one of the recipe's variants: {sample(variants)}",
                    "variant-reference",
                )
    for vkey in variants:
        if not any(_mode_allows(mode, vkey) for mode in modes.values()):
            yield error(
                at + ("modes",),
                f"feature '{fkey}' has no mode available for variant '{vkey}', so enabling it "
                "there does nothing",
                f"add '{vkey}' to some mode's variants list (or drop that mode's variants limit)",
                "no-usable-mode",
                at_key=True,
            )


def _default_modes(vkey: str, variant: dict, features: dict) -> Iterator[Finding]:
    for fkey, mkey in as_map(variant.get("default_modes")).items():
        at = ("variants", vkey, "default_modes", fkey)
        if not isinstance(mkey, str):
            continue  # a wrong type; the schema check reports it
        feature = features.get(fkey)
        if feature is None:
            yield error(
                at,
                f"default_modes names unknown feature '{fkey}'{suggest(fkey, features)}",
                f"use a feature of this recipe: {sample(features)}",
                "feature-reference",
                at_key=True,
            )
            continue
        modes = _modes_of(as_map(feature))
        if not modes:
            yield error(
                at,
                f"default_modes names feature '{fkey}', which has no modes",
                f"give '{fkey}' a modes map, or remove this entry",
                "mode-reference",
                at_key=True,
            )
        elif mkey not in modes:
            yield error(
                at,
                f"'{mkey}' is not a mode of feature '{fkey}'{suggest(str(mkey), modes)}",
                f"use one of: {sample(modes)}",
                "mode-reference",
            )
        elif not _mode_allows(modes[mkey], vkey):
            yield error(
                at,
                f"mode '{mkey}' of '{fkey}' is not available for variant '{vkey}'",
                f"add '{vkey}' to features.{fkey}.modes.{mkey}.variants, or pick another mode",
                "mode-reference",
            )


def _feature_list(names: list, features: dict, at: tuple, what: str) -> Iterator[Finding]:
    for i, name in enumerate(names):
        if isinstance(name, str) and name not in features:
            yield error(
                at + (i,),
                f"{what} names unknown feature '{name}'{suggest(name, features)}",
                f"use a feature defined under features: ({sample(features)})"
                if features
                else "define the feature under features: first",
                "feature-reference",
            )


def _exclusive(features: dict, default_off: set[str]) -> Iterator[Finding]:
    reported: set[frozenset[str]] = set()
    for fkey, feature in features.items():
        at = ("features", fkey, "exclusive_with")
        for i, other in enumerate(as_list(as_map(feature).get("exclusive_with"))):
            if not isinstance(other, str):
                continue
            if other == fkey:
                yield error(
                    at + (i,),
                    f"feature '{fkey}' lists itself in exclusive_with",
                    "remove it from its own exclusive_with",
                    "feature-reference",
                )
            elif other not in features:
                yield error(
                    at + (i,),
                    f"exclusive_with names unknown feature '{other}'{suggest(other, features)}",
                    f"use a feature defined under features: ({sample(features)})",
                    "feature-reference",
                )
            elif fkey not in default_off and other not in default_off:
                pair = frozenset((fkey, other))
                if pair not in reported:
                    reported.add(pair)
                    yield error(
                        at + (i,),
                        f"'{fkey}' and '{other}' are mutually exclusive but both are on by default",
                        "add one of them to opt_in_features",
                        "exclusive-defaults",
                    )


def _partners(features: dict) -> dict[str, set[str]]:
    """exclusive_with read both ways: feature -> the known features it cannot run with."""
    out: dict[str, set[str]] = {name: set() for name in features}
    for name, feature in features.items():
        for other in as_list(as_map(feature).get("exclusive_with")):
            if isinstance(other, str) and other in features and other != name:
                out[name].add(other)
                out[other].add(name)
    return out


def _forced_exclusions(features: dict, variants: dict, default_off: set[str]) -> Iterator[Finding]:
    """A variant's default_modes turns an opt-in feature on; it must not collide either."""
    partners = _partners(features)
    for vkey, variant in variants.items():
        forced = [f for f in as_map(as_map(variant).get("default_modes")) if f in features]
        on = (set(features) - default_off) | set(forced)
        for fkey in forced:
            if fkey not in default_off:
                continue  # on for every variant anyway; the recipe-level check covers it
            for other in sorted(partners[fkey] & on):
                yield error(
                    ("variants", vkey, "default_modes", fkey),
                    f"variant '{vkey}' turns '{fkey}' on by default, but '{fkey}' is mutually "
                    f"exclusive with '{other}', which is also on by default",
                    f"add '{other}' to opt_in_features, or drop this default mode",
                    "exclusive-defaults",
                    at_key=True,
                )


def feature_issues(recipe: dict) -> Iterator[Finding]:
    features = as_map(recipe.get("features"))
    variants = as_map(recipe.get("variants"))
    for fkey, feature in features.items():
        yield from _feature_modes(fkey, as_map(feature), variants)
    for vkey, variant in variants.items():
        yield from _default_modes(vkey, as_map(variant), features)
    opt_in = as_list(recipe.get("opt_in_features"))
    yield from _feature_list(opt_in, features, ("opt_in_features",), "opt_in_features")
    for hw, names in as_map(recipe.get("hardware_opt_in_features")).items():
        yield from _feature_list(
            as_list(names), features, ("hardware_opt_in_features", hw), "hardware_opt_in_features"
        )
    default_off = {n for n in opt_in if isinstance(n, str)}
    yield from _exclusive(features, default_off)
    yield from _forced_exclusions(features, variants, default_off)
    if isinstance(recipe.get("variants"), dict) and "default" not in variants:
        yield error(
            ("variants",),
            "the recipe has no 'default' variant",
            "name the base checkpoint's variant 'default'",
            "missing-default-variant",
            at_key=True,
        )
