"""Matching the ids a person types (recipe ids, checkpoint ids) against the ids a catalog spells.

Hugging Face repository ids are case-insensitive: the Hub answers ``meta-llama/llama-2-7b-hf``
with the repository ``meta-llama/Llama-2-7b-hf`` (a Hub maintainer: "repo ids are case
insensitive across the Hub", https://github.com/huggingface/huggingface_hub/issues/2090; the
same behaviour in https://github.com/huggingface/huggingface_hub/issues/1453). Recipe ids are
the repository ids of the models they serve, so both match without regard to case here, and
the catalog's own spelling is what every plan shows. An id the catalog does not know gets the
few closest ids (``difflib``), never the whole list.

Every surface (CLI ``plan``/``fit``/``show``/``warm-cache``/``up``, ``plan --batch``, the
Python API, the JSON API and the web builder) finds ids through this module.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from servekit.errors import SelectionError

CLOSEST = 5
"""How many close ids an unknown one is answered with."""

CUTOFF = 0.6
"""``difflib`` similarity below which an id is not offered as close."""


def id_key(name: str) -> str:
    """The form two ids are compared in: case folded (``Google/X`` and ``google/x`` are one id)."""
    return name.casefold()


def canonical_id(name: str, ids: Iterable[str]) -> str | None:
    """The catalog's spelling of ``name``: itself when the catalog spells it so, else the one id
    equal to it ignoring case; None when there is none. Two catalog ids that differ only in case
    (a catalog should not hold both) are told apart by exact spelling only."""
    if isinstance(ids, (Mapping, set, frozenset)) and name in ids:
        return name  # the exact spelling, found without a scan
    wanted = id_key(name)
    found = None
    for candidate in ids:
        if candidate == name:
            return candidate
        if id_key(candidate) == wanted:
            if found is not None:
                return None
            found = candidate
    return found


def closest_ids(name: str, ids: Iterable[str], n: int = CLOSEST) -> list[str]:
    """Up to ``n`` catalog ids most like ``name`` (case ignored), the closest first."""
    by_key: dict[str, str] = {}
    for candidate in ids:
        by_key.setdefault(id_key(candidate), candidate)
    matches = difflib.get_close_matches(id_key(name), list(by_key), n=n, cutoff=CUTOFF)
    return [by_key[m] for m in matches]


class UnknownIdError(SelectionError):
    """An id the catalog does not know: ``unknown KIND 'name'``, then a hint (what the name could
    still be, and how to get it), then the closest ids the catalog has, if any."""

    def __init__(self, kind: str, name: str, ids: Iterable[str], *, hint: str | None = None,
                 fix: str | None = None) -> None:
        self.kind, self.name, self.ids = kind, name, list(ids)
        self.closest = closest_ids(name, self.ids)
        parts = [f"unknown {kind} {name!r}", *([hint] if hint else []),
                 *([f"closest: {', '.join(self.closest)}"] if self.closest else [])]
        super().__init__("; ".join(parts), fix=fix)

    def with_hint(self, hint: str, fix: str | None = None) -> UnknownIdError:
        """The same error with ``hint`` said before the closest ids (and ``fix``, when given)."""
        return UnknownIdError(self.kind, self.name, self.ids, hint=hint, fix=fix or self.fix)


def unknown_model(model: str, recipes: Mapping[str, Any], *, hint: str | None = None,
                  fix: str | None = "`servekit list` shows every recipe id and checkpoint id") -> UnknownIdError:
    """MODEL names no recipe and no variant's checkpoint of ``recipes``."""
    return UnknownIdError("recipe", model, model_ids(recipes), hint=hint, fix=fix)


def checkpoints(recipe: Any) -> list[tuple[str, str]]:
    """(variant key, checkpoint id) of each variant of a recipe document that names its ``model_id``."""
    variants = recipe.get("variants") if isinstance(recipe, dict) else None
    return [(str(key), doc["model_id"]) for key, doc in (variants.items() if isinstance(variants, dict) else ())
            if isinstance(doc, dict) and isinstance(doc.get("model_id"), str)]


def model_ids(recipes: Mapping[str, Any]) -> list[str]:
    """Every id a MODEL argument may name in these recipes: recipe ids, then checkpoint ids."""
    out = dict.fromkeys(recipes)
    for recipe in recipes.values():
        out.update(dict.fromkeys(model_id for _, model_id in checkpoints(recipe)))
    return list(out)


def recipe_for_model(recipes: Mapping[str, Any], model: str,
                     variant: str | None = None) -> tuple[str, str | None] | None:
    """(recipe id, variant) for MODEL: a recipe id (``variant`` as given), or a variant's
    checkpoint id (which picks that variant; with ``variant`` given, only that variant's); None
    for neither. Both match without regard to case; the ids returned are the catalog's."""
    rid = canonical_id(model, recipes)
    if rid is not None:
        return rid, variant
    wanted = id_key(model)
    for rid, recipe in recipes.items():
        for key, model_id in checkpoints(recipe):
            if id_key(model_id) == wanted and variant in (None, key):
                return rid, key
    return None
