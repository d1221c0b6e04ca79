"""Semantic JSON comparison that names the first place two documents differ."""

from __future__ import annotations

from typing import Any

from servekit.api.recipe_doc import OWN_KEY

MISSING = object()


def _show(value: Any) -> str:
    if value is MISSING:
        return "<missing>"
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def first_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """None when equal as JSON values; else ``key.path: expected X, got Y``.

    Numbers compare by value (``1`` equals ``1.0``), objects ignore key order, arrays don't.
    A ``servekit`` key that only ``actual`` has is servekit's own addition and is not compared.
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                return f"{path}.{key}: expected {_show(expected[key])}, got <missing>"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        for key in actual:
            if key not in expected and key != OWN_KEY:
                return f"{path}.{key}: expected <missing>, got {_show(actual[key])}"
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (a, b) in enumerate(zip(expected, actual)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        return None
    same_kind = isinstance(expected, bool) == isinstance(actual, bool)
    if same_kind and expected == actual and type(expected) in (type(actual), int, float):
        return None
    if same_kind and expected == actual and isinstance(actual, (int, float)):
        return None
    return f"{path}: expected {_show(expected)}, got {_show(actual)}"


def without_fields(doc: Any, fields: set[str]) -> Any:
    """A copy of ``doc`` with each dotted field path (``prefill.env``) removed where present."""
    if not fields or not isinstance(doc, dict):
        return doc
    out = dict(doc)
    for field in fields:
        head, _, rest = field.partition(".")
        if head not in out:
            continue
        if rest:
            out[head] = without_fields(out[head], {rest})
        else:
            del out[head]
    return out
