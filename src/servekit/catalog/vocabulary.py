"""The names a catalog defines, which every reference in a recipe must come from.

Hardware keys come in three keyspaces (as the public recipes builder distinguishes them):

- exact: only a hardware profile id (``meta.hardware``, ``hardware_opt_in_features``, ...);
- selector: a profile id or ``arch:<compute_arch>`` (``variants.*.supported_hardware``);
- layered: a profile id, a generation, a brand (lower case) or ``default``, looked up most
  specific first (``hardware_overrides``, ``strategy_hardware``, variant ``tp``, ...).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import field
from typing import Any

from servekit.records import record

ARCH_PREFIX = "arch:"
DEFAULT_KEY = "default"


def as_map(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def suggest(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` or nothing."""
    by_lower = {str(c).lower(): str(c) for c in sorted(set(choices))}
    match = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean '{by_lower[match[0]]}'?)" if match else ""


def sample(names: Iterable[str], limit: int = 6) -> str:
    items = sorted(set(names))
    shown = ", ".join(items[:limit])
    return shown + (", ..." if len(items) > limit else "")


@record
class HardwareVocabulary:
    profiles: frozenset[str]
    generations: frozenset[str]
    brands: frozenset[str]
    """Lower case, as hardware keys spell them."""
    compute_archs: frozenset[str]

    @classmethod
    def from_taxonomy(cls, taxonomy: Any) -> HardwareVocabulary:
        profiles = as_map(as_map(taxonomy).get("hardware_profiles"))
        specs = [as_map(p) for p in profiles.values()]
        return cls(
            profiles=frozenset(profiles),
            generations=frozenset(str(p["generation"]) for p in specs if p.get("generation")),
            brands=frozenset(str(p["brand"]).lower() for p in specs if p.get("brand")),
            compute_archs=frozenset(str(p["compute_arch"]) for p in specs if p.get("compute_arch")),
        )

    @property
    def layered(self) -> frozenset[str]:
        return self.profiles | self.generations | self.brands | {DEFAULT_KEY}

    def is_layered(self, key: str) -> bool:
        return key in self.layered

    def is_selector(self, key: str) -> bool:
        if key.startswith(ARCH_PREFIX):
            return key[len(ARCH_PREFIX) :] in self.compute_archs
        return key in self.profiles

    def kind_of(self, key: str) -> str | None:
        """'generation' / 'brand' / 'default' for a non-profile layered key."""
        if key in self.generations:
            return "generation"
        if key in self.brands:
            return "brand"
        if key == DEFAULT_KEY:
            return "fallback key"
        return None

    def layered_hint(self) -> str:
        return (
            f"use a hardware profile id ({sample(self.profiles, 4)}), a generation "
            f"({sample(self.generations, 4)}), a brand ({sample(self.brands, 4)}) or 'default'"
        )

    def profile_hint(self) -> str:
        return f"use a hardware profile id from taxonomy.yaml ({sample(self.profiles, 5)})"


@record
class CatalogVocabulary:
    hardware: HardwareVocabulary
    strategies: frozenset[str]
    """Serving strategies (strategies/*.yaml)."""
    kv_stores: frozenset[str]
    """KV-store deployments (kv_store/*.yaml)."""
    tasks: frozenset[str]
    kv_offload: frozenset[str]
    platforms: frozenset[str]
    recipes: frozenset[str] = field(default_factory=frozenset)
    """Recipe ids, lower case (Hugging Face ids are case-insensitive)."""

    @classmethod
    def build(
        cls,
        taxonomy: Any,
        strategies: Iterable[str],
        kv_stores: Iterable[str],
        platforms: Any,
        recipes: Iterable[str],
    ) -> CatalogVocabulary:
        tax = as_map(taxonomy)
        return cls(
            hardware=HardwareVocabulary.from_taxonomy(tax),
            strategies=frozenset(strategies),
            kv_stores=frozenset(kv_stores),
            tasks=frozenset(
                str(as_map(t).get("id")) for t in as_list(tax.get("tasks")) if as_map(t).get("id")
            ),
            kv_offload=frozenset(as_map(tax.get("kv_offload"))),
            platforms=frozenset(
                str(as_map(p).get("id"))
                for p in as_list(as_map(platforms).get("platforms"))
                if as_map(p).get("id")
            ),
            recipes=frozenset(r.lower() for r in recipes),
        )
