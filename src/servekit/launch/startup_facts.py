"""Facts a server's startup log states (KV pool tokens, maximum concurrency, weight memory, load
and compile times), read with the engine's ``LaunchSpec.log_facts`` (one group holds the value)
and ``log_products`` (the groups multiply to it: pages x tokens per page).

The first line that matches wins; a fact the log does not state is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from servekit.engines.common.engine import Engine

FACT_NAMES: Mapping[str, str] = {"kv_cache_tokens": "kv_tokens"}
"""An engine's fact name -> the name ``verify`` reports it under (others keep their name)."""


def _number(text: str) -> int | float:
    clean = text.replace(",", "")
    return int(clean) if clean.isdigit() else float(clean)


def _value(match: re.Match[str]) -> int | float | None:
    groups = [g for g in match.groups() if g]
    return _number(groups[0]) if groups else None


def _product(match: re.Match[str]) -> int | float:
    product: int | float = 1
    for group in match.groups():
        product *= _number(group)
    return product


def read_facts(text: str, engine: Engine | None) -> dict[str, Any]:
    """Every fact ``engine``'s log regexes find in ``text``, by the names ``verify`` reports."""
    if engine is None:
        return {}
    found: dict[str, Any] = {}
    for name, pattern in engine.launch.log_facts.items():
        match = re.search(pattern, text)
        value = _value(match) if match is not None else None
        if value is not None:
            found[FACT_NAMES.get(name, name)] = value
    for name, pattern in engine.launch.log_products.items():
        match = re.search(pattern, text)
        if match is not None and FACT_NAMES.get(name, name) not in found:
            found[FACT_NAMES.get(name, name)] = _product(match)
    return found
