"""Readers shared by the domain types: how a raw catalog value becomes a field.

Every reader keeps the meaning the catalog's ``x or {}`` / ``x or []`` idiom had: an absent,
null or empty value reads as the empty container. A value of another shape is a misshapen
document: it raises ``TypeError`` (as a lookup on it did), which planning turns into the
validator's report of the cause (``servekit.catalog.faults``). Scalars and pass-through
values (argument lists, env maps) stay exactly as written.
"""

from __future__ import annotations

from typing import Any

Doc = dict[str, Any]


def mapping(value: Any) -> Doc:
    """A mapping as written; absent, null or empty reads as ``{}``."""
    if isinstance(value, dict):
        return value
    if not value:
        return {}
    raise TypeError(f"expected a mapping, got {type(value).__name__}")


def listing(value: Any) -> list[Any]:
    """A list as written; absent, null or empty reads as ``[]``."""
    if isinstance(value, list):
        return value
    if not value:
        return []
    raise TypeError(f"expected a list, got {type(value).__name__}")
