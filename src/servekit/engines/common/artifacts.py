"""What an engine loads at start: Hugging Face repos (or local folders) and their roles.

Each engine reads its own command line into a list of :class:`Artifact` (``Engine.artifacts``);
warm-cache fetches exactly those. Local paths are reported as such and never downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from servekit.errors import ServekitError
from servekit.records import record

REPO_ID = re.compile(r"^(?:[A-Za-z0-9][\w.\-]*/)?[\w.\-]+$")

# Roles decide which files are fetched: weights for models, drafts and adapters; only tokenizer
# and config files for a tokenizer repo.
MODEL, DRAFT, TOKENIZER, ADAPTER = "model", "draft", "tokenizer", "adapter"


class ArtifactError(ServekitError):
    """A launch command names an artifact servekit cannot interpret."""


@record
class Artifact:
    """One repo (or local folder) the engine loads at start."""

    repo_id: str
    role: str  # model | draft | tokenizer | adapter
    source: str  # the option it came from, e.g. "--speculative-config.model"
    revision: str = "main"
    local: bool = False  # a path on disk: nothing to download
    weight_format: str = "auto"  # auto | safetensors | pt | gguf[:<encoding>]

    def key(self) -> tuple[str, str]:
        return (self.repo_id, self.revision)

    def to_dict(self) -> dict:
        return {
            "repo_id": self.repo_id,
            "role": self.role,
            "source": self.source,
            "revision": self.revision,
            "local": self.local,
            "weight_format": self.weight_format,
        }


def is_local_path(value: str) -> bool:
    """A folder or file on disk rather than a hub repo id."""
    if value.startswith(("/", "./", "../", "~")) or "\\" in value:
        return True
    return not REPO_ID.match(value) or Path(value).exists()


def make_artifact(repo: str, role: str, source: str, revision: str | None, weight_format: str = "auto") -> Artifact:
    return Artifact(
        repo_id=repo,
        role=role,
        source=source,
        revision=revision or "main",
        local=is_local_path(repo),
        weight_format=weight_format,
    )


def dedupe(artifacts: Sequence[Artifact]) -> list[Artifact]:
    """Keep the first artifact per (repo, revision); a model role wins over a tokenizer role."""
    chosen: dict[tuple[str, str], Artifact] = {}
    for art in artifacts:
        held = chosen.get(art.key())
        if held is None or (held.role == TOKENIZER and art.role != TOKENIZER):
            chosen[art.key()] = art
    return list(chosen.values())
