"""Which Hugging Face repos a ``max serve`` / ``max warm-cache`` command loads: ``--model-path``
(or ``--model``), ``--draft-model-path``, ``--lora-paths``; GGUF encodings pick GGUF files."""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.artifacts import ADAPTER, DRAFT, MODEL, Artifact, ArtifactError, make_artifact

GGUF_ENCODINGS = ("q4_k", "q4_0", "q6_k")


def _options(argv: Sequence[str]) -> dict[str, list[str]]:
    """Every ``--flag value`` / ``--flag=value`` occurrence; flags with several values keep all."""
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token.startswith("--"):
            name, eq, inline = token.partition("=")
            name = name.replace("_", "-")
            if eq:
                found.setdefault(name, []).append(inline)
            else:
                j = i + 1
                while j < len(argv) and not argv[j].startswith("--"):
                    found.setdefault(name, []).append(argv[j])
                    j += 1
                found.setdefault(name, [])
                i = j
                continue
        i += 1
    return found


def _first(opts: dict[str, list[str]], *names: str) -> str | None:
    for name in names:
        values = opts.get(name) or []
        if values:
            return values[0]
    return None


def _format(encoding: str | None) -> str:
    text = (encoding or "").lower()
    return f"gguf:{text}" if text in GGUF_ENCODINGS else "auto"


def max_artifacts(argv: Sequence[str]) -> list[Artifact]:
    opts = _options(argv)
    model = _first(opts, "--model-path", "--model")
    if not model:
        raise ArtifactError("the MAX command names no model", fix="pass --model-path")
    fmt = _format(_first(opts, "--quantization-encoding"))
    found = [make_artifact(model, MODEL, "--model-path", _first(opts, "--huggingface-model-revision"), fmt)]
    draft = _first(opts, "--draft-model-path")
    if draft:
        revision = _first(opts, "--draft-huggingface-model-revision")
        draft_fmt = _format(_first(opts, "--draft-quantization-encoding"))
        found.append(make_artifact(draft, DRAFT, "--draft-model-path", revision, draft_fmt))
    for path in opts.get("--lora-paths", []):
        found.append(make_artifact(path, ADAPTER, "--lora-paths", None))
    return found
