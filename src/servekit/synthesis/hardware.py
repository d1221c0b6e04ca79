"""Hardware lookups shared by every rule that keys a map by hardware.

A taxonomy hardware profile names a ``brand`` (NVIDIA, AMD, Intel, Google, Huawei) and a
``generation`` (hopper, blackwell, amd, tpu, cpu, xpu, npu, ...). Recipes key their maps by
one of three layers, and this module is the one place that knows how each map is read:

* *layered* maps (``strategy_hardware``, variant ``tp``, feature and mode
  ``hardware_overrides``): exact profile id, else generation, else lower-case brand, else
  ``default``;
* *generation* maps (recipe, variant and strategy-override ``hardware_overrides``): the
  generation, else ``nvidia`` for every NVIDIA profile.
"""

from __future__ import annotations

from typing import Any

Profile = dict[str, Any]
Doc = dict[str, Any]


def generation(profile: Profile | None) -> str | None:
    """The profile's generation; a list (consumer cards) counts as its first entry."""
    if not profile:
        return None
    gen = profile.get("generation") or profile.get("gpu_generation")
    if isinstance(gen, list):
        return gen[0] if gen else None
    return gen


def generations(profile: Profile | None) -> list[str]:
    """Every generation a profile belongs to (a list for multi-generation entries)."""
    if not profile:
        return []
    gen = profile.get("generation") or profile.get("gpu_generation")
    if isinstance(gen, list):
        return [g for g in gen if isinstance(g, str)]
    return [gen] if isinstance(gen, str) else []


def brand(profile: Profile | None) -> str | None:
    value = (profile or {}).get("brand")
    return value if isinstance(value, str) else None


def is_nvidia(profile: Profile | None) -> bool:
    return brand(profile) == "NVIDIA"


def gpu_count(profile: Profile | None, default: int = 1) -> int:
    value = (profile or {}).get("gpu_count")
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def node_vram_gb(profile: Profile | None) -> float:
    value = (profile or {}).get("vram_gb")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


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

PRECISION_CONSTRAINTS: dict[str, dict[str, str]] = {
    "nvfp4": {"brand": "NVIDIA", "generation": "blackwell"},
    "fp4": {"brand": "NVIDIA", "generation": "blackwell"},
}
"""Precisions that only run on some hardware unless a variant says otherwise."""

KV_STORE_BRANDS = ("NVIDIA", "AMD")
"""Mooncake's transfer engine ships CUDA and ROCm builds only."""


def precision_constraint(variant: Doc | None) -> dict[str, str] | None:
    variant = variant or {}
    return variant.get("precision_hardware") or PRECISION_CONSTRAINTS.get(variant.get("precision"))


def matches_constraint(profile: Profile, constraint: dict[str, str] | None) -> bool:
    if not constraint:
        return True
    if constraint.get("brand") and brand(profile) != constraint["brand"]:
        return False
    if constraint.get("generation") and constraint["generation"] not in generations(profile):
        return False
    return True


def precision_compatible(profile: Profile, variant: Doc | None) -> bool:
    return matches_constraint(profile, precision_constraint(variant))


def hardware_supported(recipe: Doc, hw_id: str) -> bool:
    """A recipe opts a GPU out with ``meta.hardware.<id>: unsupported``."""
    return ((recipe.get("meta") or {}).get("hardware") or {}).get(hw_id) != "unsupported"


def variant_hardware_supported(variant: Doc | None, hw_id: str, profile: Profile | None = None) -> bool:
    """``supported_hardware`` lists profile ids (or ``arch:<compute_arch>``); empty = all."""
    allowed = (variant or {}).get("supported_hardware")
    if not isinstance(allowed, list) or not allowed:
        return True
    arch = (profile or {}).get("compute_arch")
    return hw_id in allowed or (arch is not None and f"arch:{arch}" in allowed)


def hardware_visible(profile: Profile, hw_id: str, recipe: Doc) -> bool:
    """Restricted profiles (workstations, TPU, CPU, NPU) show only where a recipe declares them."""
    return not profile.get("restricted") or hw_id in ((recipe.get("meta") or {}).get("hardware") or {})


def hardware_scalable(profile: Profile | None) -> bool:
    """Workstations marked ``scalable: false`` cannot join a multi-node deployment."""
    return (profile or {}).get("scalable") is not False


def kv_store_brand_supported(profile: Profile | None) -> bool:
    return brand(profile) in KV_STORE_BRANDS


