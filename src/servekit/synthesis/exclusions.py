"""Mutually exclusive features: never emitted together. In a complete feature set (a default
set, a batch line's ``features``) the later choice wins and the plan says so; among a person's
own requests (``--feature``, ``--no-feature``, ``--mode``) a contradiction is an error naming both.

A feature declares its exclusions with an explicit ``exclusive_with: [..]`` list (the bundled
catalog does), or, in catalogs of the public schema, with a description saying "Mutually
exclusive with <feature>". Either side declaring it is enough.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from servekit.catalog.domain import Recipe

_EXCLUSIVE_PHRASE = re.compile(r"mutually exclusive with ([^.;\n]*)", re.IGNORECASE)


_EXCLUSION_CACHE: dict[int, tuple[Recipe, dict[str, set[str]]]] = {}


def exclusive_with(recipe: Recipe, feature_key: str) -> set[str]:
    """Features that cannot run beside ``feature_key``, in either direction: an explicit
    ``exclusive_with: [..]`` list, or (for catalogs of the public schema) a description
    saying "Mutually exclusive with <feature>"."""
    cached = _EXCLUSION_CACHE.get(id(recipe))
    if cached is None or cached[0] is not recipe:
        cached = (recipe, {key: _exclusive_with(recipe, key) for key in recipe.features})
        _EXCLUSION_CACHE[id(recipe)] = cached
    return set(cached[1].get(feature_key, ()))


def _exclusive_with(recipe: Recipe, feature_key: str) -> set[str]:
    features = recipe.features

    def declared(key: str) -> set[str]:
        feature = features.get(key)
        if feature is None:
            return set()
        explicit = feature.exclusive_with
        if isinstance(explicit, list):
            return {str(x) for x in explicit if x in features}
        found: set[str] = set()
        for match in _EXCLUSIVE_PHRASE.finditer(str(feature.description or "")):
            found.update(w for w in re.findall(r"[A-Za-z0-9_]+", match.group(1)) if w in features)
        return found

    out = declared(feature_key)
    out.update(other for other in features if other != feature_key and feature_key in declared(other))
    out.discard(feature_key)
    return out


def apply_exclusions(recipe: Recipe, enabled: list[str]) -> tuple[list[str], list[str]]:
    """Drop earlier choices that a later, mutually exclusive choice overrides; say so."""
    kept: list[str] = []
    notes: list[str] = []
    for feature in enabled:
        clash = [k for k in kept if k in exclusive_with(recipe, feature)]
        for other in clash:
            kept.remove(other)
            notes.append(f"{feature} and {other} are mutually exclusive; {feature} (chosen later) wins")
        if feature not in kept:
            kept.append(feature)
    return kept, notes


def _asked_as(feature: str, modes: Mapping[str, str], enable: Sequence[str]) -> str:
    return f"--feature {feature}" if feature in enable else f"--mode {feature}={modes[feature]}"


def conflicting_requests(recipe: Recipe, enable: Sequence[str], disable: Sequence[str],
                         modes: Mapping[str, str]) -> str | None:
    """The first contradiction among explicit feature requests, naming both sides: a feature
    both enabled (``--feature``, or a ``--mode`` for it) and disabled, or two enabled features
    the recipe marks mutually exclusive. None when the requests agree."""
    disabled = set(disable)
    asked = list(dict.fromkeys([*enable, *modes]))
    for feature in asked:
        if feature in disabled:
            return f"{_asked_as(feature, modes, enable)} and --no-feature {feature} contradict each other"
    for i, first in enumerate(asked):
        for second in asked[i + 1:]:
            if second in exclusive_with(recipe, first):
                return (f"{_asked_as(first, modes, enable)} and {_asked_as(second, modes, enable)} contradict "
                        f"each other: the recipe marks {first} and {second} mutually exclusive")
    return None
