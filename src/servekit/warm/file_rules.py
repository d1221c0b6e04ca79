"""Which files of a repo an engine loads at start, and nothing else.

Engines load one weight format from the repo root (vLLM's ``auto`` tries safetensors, then
PyTorch ``.bin``, then ``.pt``; MAX the same, or GGUF for GGUF encodings), the config files,
tokenizer and chat-template files, generation and preprocessor configs, and remote code. They
never read ``original/`` or other subfolders, ONNX exports, or the other weight formats a repo
carries beside the chosen one. When a weight index exists, only the shards it names are loaded.

With a repo listing the choice is an exact file list; without one (offline dry run) it is a set
of ``allow``/``ignore`` patterns in ``huggingface_hub``'s fnmatch syntax.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field

from servekit.records import record
from servekit.warm.artifacts import TOKENIZER
from servekit.errors import ServekitError

METADATA_SUFFIXES = (".json", ".jinja", ".model", ".tiktoken", ".py")
METADATA_NAMES = frozenset({"vocab.txt", "merges.txt"})
WEIGHT_SUFFIXES = {"safetensors": ".safetensors", "pt": ".bin", "pt-legacy": ".pt", "gguf": ".gguf"}
PREFERRED_INDEX = {"safetensors": "model.safetensors.index.json", "pt": "pytorch_model.bin.index.json"}
SUBFOLDERS = "*/*"


class RepoLayoutError(ServekitError):
    """A repo's files contradict each other (an index naming a shard the repo lacks, no weights)."""


@record
class FileSelection:
    """What to fetch from one repo: exact files when listed, else patterns."""

    files: tuple[str, ...] = ()
    weights: tuple[str, ...] = ()
    index: str | None = None
    weight_format: str | None = None  # the format chosen: safetensors | pt | pt-legacy | gguf
    skipped: tuple[str, ...] = ()
    allow_patterns: tuple[str, ...] = ()
    ignore_patterns: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exact(self) -> bool:
        return bool(self.files)


def is_root(path: str) -> bool:
    return "/" not in path


def is_metadata(path: str) -> bool:
    """Config, tokenizer, chat template and remote-code files at the repo root (not weight indexes)."""
    if not is_root(path) or path.endswith(".index.json"):
        return False
    return path.endswith(METADATA_SUFFIXES) or path in METADATA_NAMES


def _weights_of(root: list[str], fmt: str, encoding: str | None = None) -> list[str]:
    suffix = WEIGHT_SUFFIXES[fmt]
    files = [p for p in root if p.endswith(suffix)]
    if fmt == "gguf" and encoding:
        matching = [p for p in files if encoding in p.lower()]
        files = matching or files
    return files


def _choose_format(root: list[str], requested: str) -> tuple[str, str | None]:
    """The weight format the engine will load from these root files."""
    if requested.startswith("gguf"):
        return "gguf", requested.partition(":")[2] or None
    if requested in ("safetensors", "pt"):
        return requested, None
    for fmt in ("safetensors", "pt", "pt-legacy"):
        if _weights_of(root, fmt):
            return fmt, None
    return "safetensors", None


def _index_for(root: list[str], fmt: str) -> str | None:
    preferred = PREFERRED_INDEX.get(fmt)
    if preferred and preferred in root:
        return preferred
    suffix = WEIGHT_SUFFIXES.get(fmt, "") + ".index.json"
    candidates = sorted(p for p in root if p.endswith(suffix))
    return candidates[0] if candidates else None


def select_from_listing(paths: Iterable[str], role: str, weight_format: str = "auto") -> FileSelection:
    """The exact files to fetch, given every path in the repo."""
    all_paths = sorted(set(paths))
    root = [p for p in all_paths if is_root(p)]
    metadata = [p for p in root if is_metadata(p)]
    weights: list[str] = []
    index = fmt = None
    notes: list[str] = []
    if role != TOKENIZER:
        fmt, encoding = _choose_format(root, weight_format)
        weights = _weights_of(root, fmt, encoding)
        index = _index_for(root, fmt) if fmt != "gguf" else None
        if not weights:
            raise RepoLayoutError(
                f"no {fmt} weights at the repo root",
                fix="check the repo id, or pick a variant whose checkpoint carries safetensors weights",
            )
        others = [p for p in root if p.endswith(tuple(WEIGHT_SUFFIXES.values())) and p not in weights]
        if others:
            notes.append(f"loads {fmt} weights; skips {len(others)} file(s) in other weight formats")
    chosen = sorted({*metadata, *weights, *([index] if index else [])})
    skipped = tuple(p for p in all_paths if p not in chosen)
    return FileSelection(
        files=tuple(chosen), weights=tuple(weights), index=index, weight_format=fmt, skipped=skipped, notes=tuple(notes)
    )


def restrict_to_index(selection: FileSelection, weight_map: Mapping[str, str], listed: Iterable[str]) -> FileSelection:
    """Only the shards the weight index names are loaded; every one of them must exist."""
    named = sorted(set(weight_map.values()))
    present = set(listed)
    absent = [name for name in named if name not in present]
    if absent:
        raise RepoLayoutError(
            f"weight index {selection.index} names shard(s) the repo does not have: {', '.join(absent)}",
            fix="the repo is incomplete upstream; pick another revision or variant",
        )
    dropped = [w for w in selection.weights if w not in named]
    files = tuple(sorted({*(p for p in selection.files if p not in dropped), *named}))
    notes = selection.notes + ((f"skips {len(dropped)} weight file(s) the index does not name",) if dropped else ())
    return FileSelection(
        files=files,
        weights=tuple(named),
        index=selection.index,
        weight_format=selection.weight_format,
        skipped=tuple(sorted({*selection.skipped, *dropped})),
        notes=notes,
    )


def patterns_for(role: str, weight_format: str = "auto") -> FileSelection:
    """Patterns for when the repo cannot be listed (offline dry run)."""
    allow = ["*.json", "*.jinja", "*.model", "*.tiktoken", "vocab.txt", "merges.txt", "*.py"]
    notes: list[str] = []
    if role != TOKENIZER:
        fmt, encoding = _choose_format([], weight_format)
        if fmt == "gguf":
            allow.append(f"*{encoding}*.gguf" if encoding else "*.gguf")
        elif fmt == "pt":
            allow += ["*.bin"]
        else:
            allow += ["*.safetensors"]
            if weight_format == "auto":
                notes.append("if the repo has no safetensors weights, its *.bin weights are fetched instead")
        notes.append("only the shards named by the weight index are fetched")
    return FileSelection(allow_patterns=tuple(allow), ignore_patterns=(SUBFOLDERS,), notes=tuple(notes))


_SPECIAL = {"[": "[[]", "]": "[]]", "*": "[*]", "?": "[?]"}


def literal_pattern(path: str) -> str:
    """An fnmatch pattern that matches exactly ``path``."""
    return "".join(_SPECIAL.get(ch, ch) for ch in path)
