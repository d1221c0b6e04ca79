"""vLLM's stored flag catalogs (``data/vllm-<version>.json``, written by scripts/extract_vllm_flags.py)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from servekit.engines.common.flags import CatalogStore, FlagCatalog

ID = "vllm"
DEFAULT_VERSION = "0.32.0"
CATALOGS = CatalogStore(Path(__file__).resolve().parent / "data", ID, "scripts/extract_vllm_flags.py")


@lru_cache(maxsize=None)
def serve_catalog(version: str | None = None) -> FlagCatalog:
    """The ``vllm serve`` catalog at ``version`` (default: the pinned one)."""
    return CATALOGS.load(version or DEFAULT_VERSION)
