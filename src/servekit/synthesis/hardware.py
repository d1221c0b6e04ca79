"""Hardware lookups shared by every rule that keys a map by hardware.

A taxonomy hardware profile names a ``brand`` (NVIDIA, AMD, Intel, Google, Huawei) and a
``generation`` (hopper, blackwell, amd, tpu, cpu, xpu, npu, ...). Recipes key their maps by
one of three layers, and this module is the one place that knows how each map is read:

* *layered* maps (``strategy_hardware``, variant ``tp``, feature and mode
  ``hardware_overrides``): exact profile id, else generation, else lower-case brand, else
  ``default``;
* *generation* maps (recipe, variant and strategy-override ``hardware_overrides``): the
  generation, else ``nvidia`` for every NVIDIA profile.

Rules here receive taxonomy entries as plain dicts; each fact is read from the typed profile
built from that entry (``servekit.hardware.profile_of``).
"""

from __future__ import annotations

from typing import Any

from servekit.catalog.domain import Recipe, Variant
from servekit.hardware import profile_of, variant_precision_supported

Profile = dict[str, Any]
Doc = dict[str, Any]


def generation(profile: Profile | None) -> str | None:
    """The profile's generation; a list (consumer cards) counts as its first entry."""
    return profile_of(profile).generation if profile else None


def generations(profile: Profile | None) -> list[str]:
    """Every generation a profile belongs to (a list for multi-generation entries)."""
    return list(profile_of(profile).generations) if profile else []


def brand(profile: Profile | None) -> str | None:
    return profile_of(profile).brand or None if profile else None


def is_nvidia(profile: Profile | None) -> bool:
    return brand(profile) == "NVIDIA"


def gpu_count(profile: Profile | None, default: int = 1) -> int:
    count = profile_of(profile).device_count if profile else None
    return default if count is None else count


def node_vram_gb(profile: Profile | None) -> float:
    return profile_of(profile).node_memory_gb if profile else 0.0


def layered_key(mapping: Any, profile: Profile | None, hw_id: str | None) -> str | None:
    """Which key of a layered map applies: exact id > generation > brand > ``default``."""
    if not isinstance(mapping, dict):
        return None
    gen = generation(profile)
    brand_name = brand(profile)
    candidates = [hw_id, gen, brand_name.lower() if brand_name else None, "default"]
    for key in candidates:
        if key is not None and mapping.get(key) is not None:
            return key
    return None


def layered_value(mapping: Any, profile: Profile | None, hw_id: str | None) -> Any:
    key = layered_key(mapping, profile, hw_id)
    return None if key is None else mapping[key]


def present(value: Any) -> bool:
    """A catalog value that counts as set: containers count even when empty."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0
    if isinstance(value, str):
        return value != ""
    return True


def generation_key(mapping: Any, profile: Profile | None) -> str | None:
    """Which key of a generation map applies: the generation, else ``nvidia`` on NVIDIA."""
    return pick_generation_key(mapping, generation(profile), is_nvidia(profile))


def pick_generation_key(mapping: Any, gen: str | None, nvidia: bool) -> str | None:
    """``generation_key`` with the profile's generation and brand already looked up."""
    if not mapping or not isinstance(mapping, dict):
        return None
    if gen is not None and present(mapping.get(gen)):
        return gen
    if nvidia and present(mapping.get("nvidia")):
        return "nvidia"
    return None


def exact_key(mapping: Any, hw_id: str | None) -> str | None:
    if not isinstance(mapping, dict) or hw_id is None:
        return None
    return hw_id if present(mapping.get(hw_id)) else None


# ── hardware predicates used by the default rules (re-exported by ``selection``) ─────────

KV_STORE_PLATFORMS = ("cuda", "rocm")
"""Mooncake's transfer engine ships CUDA and ROCm builds only."""


def precision_compatible(profile: Profile, variant: Variant | None) -> bool:
    return variant_precision_supported(profile_of(profile), variant.raw if variant is not None else None)


def hardware_supported(recipe: Recipe, hw_id: str) -> bool:
    """A recipe opts a GPU out with ``meta.hardware.<id>: unsupported``."""
    return recipe.hardware_mark(hw_id) != "unsupported"


def variant_hardware_supported(variant: Variant | None, hw_id: str, profile: Profile | None = None) -> bool:
    """``supported_hardware`` lists profile ids (or ``arch:<compute_arch>``); empty = all."""
    allowed = variant.supported_hardware if variant is not None else None
    if not isinstance(allowed, list) or not allowed:
        return True
    arch = profile_of(profile).compute_arch if profile else None
    return hw_id in allowed or (arch is not None and f"arch:{arch}" in allowed)


def hardware_visible(profile: Profile, hw_id: str, recipe: Recipe) -> bool:
    """Restricted profiles (workstations, TPU, CPU, NPU) show only where a recipe declares them."""
    return not profile_of(profile).restricted or hw_id in recipe.meta.hardware


def hardware_scalable(profile: Profile | None) -> bool:
    """Workstations marked ``scalable: false`` cannot join a multi-node deployment."""
    return profile_of(profile).scalable


def kv_store_brand_supported(profile: Profile | None) -> bool:
    return bool(profile) and profile_of(profile).platform in KV_STORE_PLATFORMS


