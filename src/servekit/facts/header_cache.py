"""Safetensors headers fetched from the hub, kept beside servekit's other files and read offline.

A checkpoint's headers (tensor name -> dtype, shape, byte offsets) are a few kilobytes per shard
and give exact weight bytes without a single weight. ``servekit facts fetch`` reads them with
HTTP range requests and stores them here, one JSON file per repo commit::

    $SERVEKIT_HOME/facts/safetensors/models--ORG--NAME/COMMIT.json

(``SERVEKIT_HOME`` defaults to ``$XDG_CACHE_HOME/servekit``.) The commit is the snapshot folder
name of the same repo in the Hugging Face cache, where config.json and the index live.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from servekit.atomic import write_json_atomic
from servekit.facts.model import WeightBytes
from servekit.facts.safetensors import SafetensorsError, weight_bytes_from_headers
from servekit.paths import home

FORMAT = 1


def header_cache_dir() -> Path:
    """Where fetched safetensors headers live (read at call time)."""
    return home() / "facts" / "safetensors"


def header_cache_file(repo_id: str, commit: str) -> Path:
    return header_cache_dir() / ("models--" + repo_id.replace("/", "--")) / f"{commit}.json"


def write_headers(repo_id: str, commit: str, headers: dict[str, dict[str, Any]]) -> Path:
    """Store ``{shard file: {tensor: {dtype, shape, data_offsets}}}`` atomically; returns the file."""
    path = header_cache_file(repo_id, commit)
    doc = {"format": FORMAT, "repo_id": repo_id, "commit": commit, "files": headers}
    write_json_atomic(path, doc, compact=True)
    return path


def read_headers(repo_id: str, commit: str) -> dict[str, dict[str, Any]] | None:
    """The stored headers of one commit, or None when none were fetched."""
    path = header_cache_file(repo_id, commit)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorsError(
            f"{path}: cannot read the stored safetensors headers ({exc})",
            fix=f"delete it and run `servekit facts fetch {repo_id}` again",
        ) from None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        raise SafetensorsError(f"{path}: no 'files' object", fix=f"run `servekit facts fetch {repo_id}` again")
    return files


def cached_weight_bytes(repo_id: str, commit: str, num_layers: int | None) -> WeightBytes | None:
    """Exact weight bytes from the stored headers of one commit, or None."""
    headers = read_headers(repo_id, commit)
    if headers is None:
        return None
    return weight_bytes_from_headers(headers.values(), num_layers)
