"""KV offload gates: which taxonomy KV-offload options and Mooncake kv-store deployments apply.

Options (``taxonomy.kv_offload``) compose with a serving strategy; PD clusters and kv-store
deployments own ``--kv-transfer-config`` themselves, so no option composes with those. A
Mooncake deployment wraps a serving strategy on NVIDIA/AMD hardware that can scale out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servekit.catalog.domain import Recipe, Strategy
from servekit.synthesis.hardware import Profile, brand, hardware_scalable, kv_store_brand_supported

if TYPE_CHECKING:
    from servekit.catalog.domain.kv_offload import KvOffload


def strategy_allows_kv_offload(strategy_doc: Strategy | None) -> bool:
    """Serving strategies compose with KV offload unless they own the KV connector."""
    return strategy_doc is None or strategy_doc.allows_kv_offload_options()


def kv_offload_allowed(option: KvOffload | None, strategy: str, strategy_doc: Strategy | None) -> bool:
    """A taxonomy KV-offload option: never under PD / kv-store, else its ``strategies`` list."""
    if option is None or not strategy_allows_kv_offload(strategy_doc):
        return False
    allowed = option.strategies
    return not isinstance(allowed, list) or not allowed or strategy in allowed


def kv_offload_supported(option: KvOffload | None, key: str, recipe: Recipe, profile: Profile | None) -> bool:
    """Recipe gate (``unsupported`` / ``requires_opt_in`` + ``verified``) and brand allowlist."""
    if option is None:
        return False
    support = recipe.kv_offload_support.get(key)
    if support == "unsupported" or (option.requires_opt_in and support != "verified"):
        return False
    brands = option.brands
    return not isinstance(brands, list) or not brands or brand(profile) in brands


def kv_store_offered(recipe: Recipe, profile: Profile | None, hw_id: str, kv_id: str) -> bool:
    """A Mooncake deployment renders on scalable NVIDIA/AMD hardware unless the recipe opts the
    GPU out (``kv_cache_strategy_hardware.<kv_id>.<hw_id>: unsupported``)."""
    opt_out = (recipe.kv_cache_strategy_hardware.get(kv_id) or {}).get(hw_id)
    return hardware_scalable(profile) and kv_store_brand_supported(profile) and opt_out != "unsupported"
