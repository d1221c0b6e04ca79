"""Which Hugging Face repos a vLLM launch loads, read from the argv itself.

The model is the positional after ``serve`` (or ``--model``); drafts come from the ``model`` key
of ``--speculative-config`` JSON (or its dotted form); ``--tokenizer`` names a tokenizer repo;
``--lora-modules`` names adapters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from servekit.engines.common.artifacts import (
    ADAPTER,
    DRAFT,
    MODEL,
    TOKENIZER,
    Artifact,
    ArtifactError,
    make_artifact,
)
from servekit.engines.vllm.launch import VllmLaunch, parse_vllm_argv

WEIGHT_FORMATS = ("safetensors", "pt", "gguf")


def vllm_model(argv: Sequence[str]) -> str | None:
    """The model a vLLM launch serves: the word after ``serve``, else ``--model``."""
    return parse_vllm_argv(argv, strict=False).model


def _speculative_drafts(launch: VllmLaunch) -> list[Artifact]:
    out = []
    for raw in launch.values("--speculative-config"):
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArtifactError(
                f"--speculative-config is not valid JSON: {exc.msg} at column {exc.colno}",
                fix='pass a JSON object such as \'{"method":"mtp"}\'',
            ) from None
        if not isinstance(doc, dict):
            raise ArtifactError("--speculative-config must be a JSON object")
        model = doc.get("model")
        if isinstance(model, str) and model:
            out.append(make_artifact(model, DRAFT, "--speculative-config.model", doc.get("revision")))
    dotted = launch.get("--speculative-config.model")  # vLLM's dotted form of the same key
    if dotted:
        out.append(make_artifact(dotted, DRAFT, "--speculative-config.model", launch.get("--speculative-config.revision")))
    return out


def _lora_modules(values: list[str]) -> list[Artifact]:
    out = []
    for value in values:
        path = value
        if value.lstrip().startswith("{"):
            try:
                path = json.loads(value).get("path", "")
            except (json.JSONDecodeError, AttributeError):
                raise ArtifactError(f"--lora-modules entry is not valid JSON: {value}") from None
        elif "=" in value:
            path = value.split("=", 1)[1]
        if path:
            out.append(make_artifact(path, ADAPTER, "--lora-modules", None))
    return out


def _first(launch: VllmLaunch, flag: str) -> str | None:
    values = launch.values(flag)
    return values[0] if values else None


def vllm_artifacts(argv: Sequence[str]) -> list[Artifact]:
    """The model, drafts, tokenizer and adapters a vLLM launch loads, in that order."""
    launch = parse_vllm_argv(argv, strict=False)
    if not launch.model:
        raise ArtifactError("the vLLM command names no model", fix="put the model after 'serve' or pass --model")
    chosen = (_first(launch, "--load-format") or "auto").lower()
    weight_format = chosen if chosen in WEIGHT_FORMATS else "auto"
    found = [make_artifact(launch.model, MODEL, "model", _first(launch, "--revision"), weight_format)]
    found += _speculative_drafts(launch)
    tokenizer = _first(launch, "--tokenizer")
    if tokenizer and tokenizer != launch.model:
        found.append(make_artifact(tokenizer, TOKENIZER, "--tokenizer", _first(launch, "--tokenizer-revision")))
    found += _lora_modules(launch.values("--lora-modules"))
    return found
