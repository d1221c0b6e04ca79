"""Model facts: config.json + safetensors headers (or shipped data) -> ModelFacts."""

from servekit.facts.config import facts_from_config, language_config
from servekit.facts.locate import FactsNotFoundError, facts_from_dir, facts_from_path_or_cache
from servekit.facts.model import (
    LinearAttentionFacts,
    MLAFacts,
    ModelFacts,
    MoEFacts,
    QuantFacts,
    WeightBytes,
)
from servekit.facts.resolve import ResolvedModel, resolve_model
from servekit.facts.safetensors import read_header, weight_bytes_from_headers
from servekit.facts.shipped import shipped_facts, shipped_model_ids

__all__ = [
    "FactsNotFoundError",
    "LinearAttentionFacts",
    "MLAFacts",
    "ModelFacts",
    "MoEFacts",
    "QuantFacts",
    "ResolvedModel",
    "WeightBytes",
    "facts_from_config",
    "facts_from_dir",
    "facts_from_path_or_cache",
    "language_config",
    "read_header",
    "resolve_model",
    "shipped_facts",
    "shipped_model_ids",
    "weight_bytes_from_headers",
]
