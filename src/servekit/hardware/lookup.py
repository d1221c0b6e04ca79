"""Profiles built once per taxonomy, and the profile behind a taxonomy entry handed around as a dict.

Catalog documents are plain dicts (``servekit.catalog.documents``); a taxonomy's profiles are
built the first time they are asked for and kept for as long as that taxonomy object lives in
the cache. Rules that receive one entry (a dict) find the profile built from that very dict;
an entry from elsewhere is built on the spot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servekit.hardware.profile import HardwareProfile, build_profile

LOCAL = "local"
"""The hardware name of the machine servekit runs on (``servekit.launch.machine`` describes it)."""
CACHE_LIMIT = 64
"""Taxonomies (and loose entries) kept; the oldest is dropped past this."""

_BY_TAXONOMY: dict[int, tuple[Mapping[str, Any], dict[str, HardwareProfile]]] = {}
_BY_ENTRY: dict[int, tuple[Mapping[str, Any], HardwareProfile]] = {}


def _remember(cache: dict, key: int, value: tuple) -> None:
    if len(cache) >= CACHE_LIMIT:
        cache.pop(next(iter(cache)))
    cache[key] = value


def build_profiles(hardware_profiles: Mapping[str, Any] | None) -> dict[str, HardwareProfile]:
    """Every profile of a ``hardware_profiles`` mapping, built once per mapping object."""
    if not isinstance(hardware_profiles, Mapping):
        return {}
    cached = _BY_TAXONOMY.get(id(hardware_profiles))
    if cached is not None and cached[0] is hardware_profiles:
        return cached[1]
    built = {str(hw): _entry_profile(raw, str(hw)) for hw, raw in hardware_profiles.items() if isinstance(raw, Mapping)}
    _remember(_BY_TAXONOMY, id(hardware_profiles), (hardware_profiles, built))
    for profile in built.values():
        _remember(_BY_ENTRY, id(profile.raw), (profile.raw, profile))
    return built


def profiles_for(taxonomy: Mapping[str, Any] | None) -> dict[str, HardwareProfile]:
    """The profiles of a taxonomy document (``CatalogDocuments.taxonomy``)."""
    return build_profiles((taxonomy or {}).get("hardware_profiles"))


def profile_of(raw: Mapping[str, Any] | None, hw_id: str | None = None) -> HardwareProfile:
    """The profile built from this taxonomy entry; an unknown entry is built (and kept) now.
    Given ``hw_id``, the profile carries that id (facts keyed by device model read it), even
    when the entry was first built without one."""
    if not isinstance(raw, Mapping) or not raw:
        return build_profile(hw_id or "", {})
    return _entry_profile(raw, hw_id)


def _entry_profile(raw: Mapping[str, Any], hw_id: str | None) -> HardwareProfile:
    """The profile built from this very entry (once, whether ``profile_of`` or ``build_profiles``
    asked first), carrying ``hw_id`` when one is given."""
    cached = _BY_ENTRY.get(id(raw))
    if cached is not None and cached[0] is raw and (hw_id is None or cached[1].id == hw_id):
        return cached[1]
    profile = build_profile(hw_id or "", raw)
    _remember(_BY_ENTRY, id(raw), (raw, profile))
    return profile
