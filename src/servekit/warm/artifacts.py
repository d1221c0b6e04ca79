"""Which Hugging Face repos a launch command loads, read from the engine argv itself.

The argv is the single source of truth: whatever the plan rendered is what the engine will
fetch, so the repos to warm are read back from it rather than from a second copy of the rules.

vLLM: the model is the positional after ``serve`` (or ``--model``); drafts come from the
``model`` key of ``--speculative-config`` JSON; ``--tokenizer`` names a tokenizer repo;
``--lora-modules`` names adapters. MAX: ``--model-path`` / ``--model``, ``--draft-model-path``,
``--lora-paths``. Local paths are reported as such and never downloaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from servekit.errors import ServekitError

REPO_ID = re.compile(r"^(?:[A-Za-z0-9][\w.\-]*/)?[\w.\-]+$")

# Roles decide which files are fetched (see file_rules): weights for models, drafts and adapters;
# only tokenizer and config files for a tokenizer repo.
MODEL, DRAFT, TOKENIZER, ADAPTER = "model", "draft", "tokenizer", "adapter"


class ArtifactError(ServekitError):
    """A launch command names an artifact servekit cannot interpret."""


@dataclass(frozen=True)
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


def _vllm_model(argv: Sequence[str], opts: dict[str, list[str]]) -> str | None:
    if "serve" in argv:
        after = argv.index("serve") + 1
        if after < len(argv) and not argv[after].startswith("-"):
            return argv[after]
    values = opts.get("--model") or []
    return values[0] if values else None


def vllm_model(argv: Sequence[str]) -> str | None:
    """The model a vLLM launch serves: the word after ``serve``, else ``--model``."""
    return _vllm_model(argv, _options(argv))


def _first(opts: dict[str, list[str]], *names: str) -> str | None:
    for name in names:
        values = opts.get(name) or []
        if values:
            return values[0]
    return None


def _make(repo: str, role: str, source: str, revision: str | None, weight_format: str = "auto") -> Artifact:
    return Artifact(
        repo_id=repo,
        role=role,
        source=source,
        revision=revision or "main",
        local=is_local_path(repo),
        weight_format=weight_format,
    )


def _speculative_drafts(opts: dict[str, list[str]]) -> list[Artifact]:
    out = []
    for raw in opts.get("--speculative-config", []):
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
            out.append(_make(model, DRAFT, "--speculative-config.model", doc.get("revision")))
    dotted = opts.get("--speculative-config.model") or []  # vLLM's dotted form of the same key
    if dotted:
        revision = (opts.get("--speculative-config.revision") or [None])[0]
        out.append(_make(dotted[0], DRAFT, "--speculative-config.model", revision))
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
            out.append(_make(path, ADAPTER, "--lora-modules", None))
    return out


def _vllm_format(opts: dict[str, list[str]]) -> str:
    chosen = (_first(opts, "--load-format") or "auto").lower()
    return chosen if chosen in ("safetensors", "pt", "gguf") else "auto"


def vllm_artifacts(argv: Sequence[str]) -> list[Artifact]:
    opts = _options(argv)
    model = _vllm_model(argv, opts)
    if not model:
        raise ArtifactError("the vLLM command names no model", fix="put the model after 'serve' or pass --model")
    found = [_make(model, MODEL, "model", _first(opts, "--revision"), _vllm_format(opts))]
    found += _speculative_drafts(opts)
    tokenizer = _first(opts, "--tokenizer")
    if tokenizer and tokenizer != model:
        found.append(_make(tokenizer, TOKENIZER, "--tokenizer", _first(opts, "--tokenizer-revision")))
    found += _lora_modules(opts.get("--lora-modules", []))
    return found


GGUF_ENCODINGS = ("q4_k", "q4_0", "q6_k")


def max_artifacts(argv: Sequence[str]) -> list[Artifact]:
    opts = _options(argv)
    model = _first(opts, "--model-path", "--model")
    if not model:
        raise ArtifactError("the MAX command names no model", fix="pass --model-path")
    encoding = (_first(opts, "--quantization-encoding") or "").lower()
    fmt = f"gguf:{encoding}" if encoding in GGUF_ENCODINGS else "auto"
    found = [_make(model, MODEL, "--model-path", _first(opts, "--huggingface-model-revision"), fmt)]
    draft = _first(opts, "--draft-model-path")
    if draft:
        draft_encoding = (_first(opts, "--draft-quantization-encoding") or "").lower()
        draft_fmt = f"gguf:{draft_encoding}" if draft_encoding in GGUF_ENCODINGS else "auto"
        found.append(
            _make(draft, DRAFT, "--draft-model-path", _first(opts, "--draft-huggingface-model-revision"), draft_fmt)
        )
    for path in opts.get("--lora-paths", []):
        found.append(_make(path, ADAPTER, "--lora-paths", None))
    return found


def artifacts_from_argv(argv: Sequence[str], engine: str = "vllm") -> list[Artifact]:
    """The repos one engine command loads, in order, without duplicates."""
    found = max_artifacts(argv) if engine == "max" else vllm_artifacts(argv)
    return dedupe(found)


def dedupe(artifacts: Sequence[Artifact]) -> list[Artifact]:
    """Keep the first artifact per (repo, revision); a model role wins over a tokenizer role."""
    chosen: dict[tuple[str, str], Artifact] = {}
    for art in artifacts:
        held = chosen.get(art.key())
        if held is None or (held.role == TOKENIZER and art.role != TOKENIZER):
            chosen[art.key()] = art
    return list(chosen.values())
