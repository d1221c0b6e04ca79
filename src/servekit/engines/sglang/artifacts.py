"""Which Hugging Face repos an SGLang launch loads: ``--model-path`` (or ``--model``), the
speculative draft, ``--tokenizer-path`` and ``--lora-paths`` adapters (``NAME=PATH`` or a path)."""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.artifacts import ADAPTER, DRAFT, MODEL, TOKENIZER, Artifact, ArtifactError, make_artifact


def _options(argv: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        name, eq, inline = argv[i].partition("=")
        if not name.startswith("--"):
            i += 1
            continue
        name = name.replace("_", "-")
        if eq:
            found.setdefault(name, []).append(inline)
            i += 1
            continue
        j = i + 1
        while j < len(argv) and not argv[j].startswith("--"):
            found.setdefault(name, []).append(argv[j])
            j += 1
        i = max(j, i + 1)
    return found


def _first(opts: dict[str, list[str]], *names: str) -> str | None:
    return next((opts[n][0] for n in names if opts.get(n)), None)


def sglang_artifacts(argv: Sequence[str]) -> list[Artifact]:
    opts = _options(argv)
    model = _first(opts, "--model-path", "--model")
    if not model:
        raise ArtifactError("the SGLang command names no model", fix="pass --model-path")
    found = [make_artifact(model, MODEL, "--model-path", _first(opts, "--revision"))]
    draft = _first(opts, "--speculative-draft-model-path", "--speculative-draft-model")
    if draft:
        found.append(make_artifact(draft, DRAFT, "--speculative-draft-model-path",
                                   _first(opts, "--speculative-draft-model-revision")))
    tokenizer = _first(opts, "--tokenizer-path")
    if tokenizer and tokenizer != model:
        found.append(make_artifact(tokenizer, TOKENIZER, "--tokenizer-path", None))
    for item in opts.get("--lora-paths", []):
        path = item.split("=", 1)[1] if "=" in item and not item.lstrip().startswith("{") else item
        if path and not path.lstrip().startswith("{"):
            found.append(make_artifact(path, ADAPTER, "--lora-paths", None))
    return found
