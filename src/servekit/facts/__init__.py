"""Model facts: config.json + safetensors headers (or shipped data) -> ModelFacts.

Facts of a hub model are fetched without weights (``fetch``: config.json and the index into the
Hugging Face cache, safetensors headers into ``header_cache``) and read offline afterwards;
``missing`` says what is not cached, ``estimate`` prices a config when no header is at hand.

Names are imported on first use, so asking whether facts ship for a checkpoint
(``servekit.facts.shipped_index``) does not pay for the typed models.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "facts_from_config": "config",
    "language_config": "config",
    "FactsMissingError": "missing",
    "FactsNotFoundError": "locate",
    "FetchedFacts": "fetch",
    "estimated_weight_bytes": "estimate",
    "facts_from_snapshot": "locate",
    "fetch_facts": "fetch",
    "has_cached_facts": "missing",
    "missing_facts": "missing",
    "facts_from_dir": "locate",
    "facts_from_path_or_cache": "locate",
    "LinearAttentionFacts": "model",
    "MLAFacts": "model",
    "ModelFacts": "model",
    "MoEFacts": "model",
    "QuantFacts": "model",
    "VisionFacts": "model",
    "WeightBytes": "model",
    "ResolvedModel": "resolve",
    "resolve_model": "resolve",
    "read_header": "safetensors",
    "weight_bytes_from_headers": "safetensors",
    "shipped_facts": "shipped",
    "shipped_model_ids": "shipped_index",
    "vision_from_config": "vision",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'servekit.facts' has no attribute {name!r}")
    return getattr(importlib.import_module(f"servekit.facts.{home}"), name)
