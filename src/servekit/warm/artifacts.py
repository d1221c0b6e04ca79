"""Which Hugging Face repos a launch command loads, read from the engine argv itself.

The argv is the single source of truth: whatever the plan rendered is what the engine will
fetch, so the repos to warm are read back from it rather than from a second copy of the rules.
Each engine reads its own command lines (``Engine.artifacts``); local paths are reported as such
and never downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.artifacts import (
    ADAPTER,
    DRAFT,
    MODEL,
    TOKENIZER,
    Artifact,
    ArtifactError,
    dedupe,
    is_local_path,
)
from servekit.engines.registry import get_engine, native_engine

__all__ = [
    "ADAPTER",
    "DRAFT",
    "MODEL",
    "TOKENIZER",
    "Artifact",
    "ArtifactError",
    "artifacts_from_argv",
    "dedupe",
    "is_local_path",
]


def artifacts_from_argv(argv: Sequence[str], engine: str | None = None) -> list[Artifact]:
    """The repos one engine command loads, in order, without duplicates (default: a vLLM launch)."""
    chosen = get_engine(engine) if engine is not None else native_engine()
    return dedupe(chosen.artifacts(argv))
