"""Find a checkpoint's files: a local directory, a config.json path, or the Hugging Face cache.

Nothing here touches the network: a hub model's config.json is read from the Hugging Face cache
and its safetensors headers from ``servekit.facts.header_cache`` (both written by
``servekit facts fetch``).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from servekit.errors import ServekitError
from servekit.facts.config import facts_from_config
from servekit.facts.header_cache import cached_weight_bytes
from servekit.facts.missing import FactsNotFoundError, looks_like_repo_id, missing_message, snapshot_dir
from servekit.facts.model import ModelFacts
from servekit.facts.safetensors import checkpoint_weight_bytes

__all__ = ["FactsNotFoundError", "cached_snapshot_dir", "facts_from_dir", "facts_from_path_or_cache", "read_config"]


def read_config(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FactsNotFoundError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ServekitError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise ServekitError(f"{path}: not UTF-8 text", fix="pass a config.json or a facts JSON file") from None
    if not isinstance(data, dict):
        raise ServekitError(f"{path}: expected a JSON object")
    return data


def cached_snapshot_dir(repo_id: str, revision: str | None = None, cache_dir: Path | None = None) -> Path | None:
    """The snapshot folder holding ``config.json`` of ``repo_id`` in the HF cache, if any.

    The cache folder is read from the environment at call time (huggingface_hub reads it once,
    at import)."""
    return snapshot_dir(repo_id, revision, cache_dir)


def facts_from_dir(folder: Path, *, model_id: str | None = None) -> ModelFacts:
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise FactsNotFoundError(
            f"{folder}: no config.json", fix="point at a checkpoint directory or its config.json"
        )
    facts = facts_from_config(read_config(config_path), model_id=model_id, source=str(config_path))
    weights = checkpoint_weight_bytes(folder, facts.num_layers)
    return replace(facts, weights=weights) if weights else facts


def facts_from_path_or_cache(
    target: str, *, revision: str | None = None, cache_dir: Path | None = None
) -> ModelFacts:
    """Facts for a directory, a config.json file, or a repo id present in the HF cache."""
    path = Path(target).expanduser()
    if path.is_file():
        return facts_from_dir(path.parent) if path.name == "config.json" else _from_file(path)
    if path.is_dir():
        return facts_from_dir(path)
    if looks_like_repo_id(target):
        snapshot = cached_snapshot_dir(target, revision, cache_dir)
        if snapshot is not None:
            return facts_from_snapshot(snapshot, target)
        raise FactsNotFoundError(
            f"no model facts for {target!r}: not a directory, a config.json, a recipe with shipped facts, "
            f"or a repo in the Hugging Face cache; {missing_message(target, revision)}",
            fix="or pass the checkpoint directory",
        )
    raise FactsNotFoundError(
        f"no model facts for {target!r}: not a directory, a config.json, a recipe with shipped "
        "facts, or a repo in the Hugging Face cache",
        fix="pass a checkpoint directory, its config.json, or a Hugging Face id ORG/NAME",
    )


def facts_from_snapshot(snapshot: Path, repo_id: str) -> ModelFacts:
    """Facts of a cached hub snapshot: its config.json, with exact weight bytes from the fetched
    safetensors headers (which tell vision and MTP tensors apart) when there are some."""
    facts = facts_from_dir(snapshot, model_id=repo_id)
    weights = cached_weight_bytes(repo_id, snapshot.name, facts.num_layers)
    return replace(facts, weights=weights) if weights else facts


def _from_file(path: Path) -> ModelFacts:
    data = read_config(path)
    if "layers" in data and "num_attention_heads" in data:
        return ModelFacts.from_json(data, where=str(path))
    return facts_from_config(data, source=str(path))
