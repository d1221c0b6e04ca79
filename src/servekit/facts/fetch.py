"""Fetch a model's facts from the hub without a single weight: config.json and the safetensors
index go into the Hugging Face cache; each shard's header is read with HTTP range requests and
stored by ``servekit.facts.header_cache``. Everything afterwards is read offline.

The endpoint (``HF_ENDPOINT``), cache folder and offline mode are read when called, not when
``huggingface_hub`` was imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from servekit.errors import ServekitError
from servekit.facts.header_cache import write_headers
from servekit.facts.missing import FactsMissingError, missing_facts
from servekit.facts.safetensors import INDEX_NAME
from servekit.hfcache import hub_cache_dir, offline_requested
from servekit.records import record

DEFAULT_ENDPOINT = "https://huggingface.co"
SINGLE_FILE = "model.safetensors"


class FetchError(ServekitError):
    """The hub refused a request for a model's facts (unknown repo or revision, gated, bad header)."""


@record
class FetchedFacts:
    repo_id: str
    commit: str
    snapshot: Path
    """The snapshot folder in the Hugging Face cache holding config.json (and the index)."""
    shards: tuple[str, ...]
    headers_file: Path | None
    """Where the shards' headers were stored; None for a checkpoint without safetensors."""


def hub_endpoint(endpoint: str | None = None) -> str:
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def fetch_facts(repo_id: str, revision: str | None = None, *, endpoint: str | None = None,
                cache_dir: Path | None = None) -> FetchedFacts:
    """Fetch config.json, the safetensors index and every shard's header of ``repo_id``."""
    cache = cache_dir or hub_cache_dir()
    if offline_requested():
        raise _unreachable(repo_id, revision, cache, "offline mode is on (HF_HUB_OFFLINE)")
    url = hub_endpoint(endpoint)
    if not _reachable(url):
        raise _unreachable(repo_id, revision, cache, f"{url} cannot be reached")
    config = _download(repo_id, "config.json", revision, url, cache, required=True)
    assert config is not None
    snapshot = config.parent
    commit = snapshot.name
    index = _download(repo_id, INDEX_NAME, commit, url, cache, required=False)
    shards = _shard_names(index)
    headers = _headers(repo_id, commit, url, shards)
    if not headers:
        return FetchedFacts(repo_id, commit, snapshot, (), None)
    return FetchedFacts(repo_id, commit, snapshot, tuple(headers), write_headers(repo_id, commit, headers))


def _reachable(endpoint: str, timeout: float = 5.0) -> bool:
    """One quick request without retries: the hub client retries a refused connection for half
    a minute before it gives up."""
    import httpx

    try:
        httpx.head(endpoint, timeout=timeout)
    except httpx.TransportError:
        return False
    return True


def _shard_names(index: Path | None) -> list[str]:
    if index is None:
        return [SINGLE_FILE]
    import json

    try:
        doc = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FetchError(f"{index}: the safetensors index cannot be read ({exc})") from None
    return sorted(set((doc.get("weight_map") or {}).values()))


def _download(repo_id: str, filename: str, revision: str | None, endpoint: str, cache: Path,
              *, required: bool) -> Path | None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    try:
        return Path(hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache, endpoint=endpoint))
    except EntryNotFoundError:
        if required:
            raise FetchError(f"{repo_id} has no {filename}", fix="name a Hugging Face model repository") from None
        return None
    except LocalEntryNotFoundError:
        raise _unreachable(repo_id, revision, cache, f"{endpoint} cannot be reached") from None
    except Exception as exc:  # noqa: BLE001 - the hub client's errors are turned into one line
        raise _hub_error(repo_id, revision, exc) from None


def _headers(repo_id: str, commit: str, endpoint: str, shards: list[str]) -> dict[str, dict[str, Any]]:
    """``{shard: {tensor: {dtype, shape, data_offsets}}}``, read with range requests."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import EntryNotFoundError

    api = HfApi(endpoint=endpoint, token=os.environ.get("HF_TOKEN") or None)
    out: dict[str, dict[str, Any]] = {}
    for shard in shards:
        try:
            meta = api.parse_safetensors_file_metadata(repo_id, shard, revision=commit)
        except EntryNotFoundError:
            if shard == SINGLE_FILE:
                return {}
            raise FetchError(f"{repo_id}@{commit[:12]}: the index names {shard}, which does not exist") from None
        except Exception as exc:  # noqa: BLE001
            raise _hub_error(repo_id, commit, exc) from None
        out[shard] = {name: {"dtype": info.dtype, "shape": list(info.shape),
                             "data_offsets": list(info.data_offsets)}
                      for name, info in meta.tensors.items()}
    return out


def _unreachable(repo_id: str, revision: str | None, cache: Path, why: str) -> FactsMissingError:
    missing = missing_facts(repo_id, revision, cache)
    what = ", ".join(missing) if missing else "nothing (the facts are cached)"
    return FactsMissingError(
        f"cannot fetch the facts of {repo_id}: {why}; missing from {cache}: {what}",
        fix=f"connect to the hub and run `servekit facts fetch {repo_id}`, or pass a local checkpoint directory",
    )


def _hub_error(repo_id: str, revision: str | None, exc: Exception) -> ServekitError:
    from huggingface_hub.errors import (
        GatedRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
        SafetensorsParsingError,
    )

    if isinstance(exc, GatedRepoError):
        return FetchError(f"{repo_id} is gated", fix="accept its terms on the hub and set HF_TOKEN")
    if isinstance(exc, RepositoryNotFoundError):
        return FetchError(f"no model repository {repo_id} on the hub",
                          fix="check the id (ORG/NAME), or set HF_TOKEN for a private repository")
    if isinstance(exc, RevisionNotFoundError):
        return FetchError(f"{repo_id} has no revision {revision!r}", fix="name an existing branch, tag or commit")
    if isinstance(exc, SafetensorsParsingError):
        return FetchError(f"{repo_id}: a safetensors header cannot be parsed ({exc})")
    name = type(exc).__name__
    if "Connect" in name or "Timeout" in name or isinstance(exc, OSError):
        return FactsMissingError(f"cannot reach the hub for {repo_id} ({name})",
                                 fix=f"check the network, then run `servekit facts fetch {repo_id}`")
    return FetchError(f"the hub refused a request for {repo_id}: {str(exc).splitlines()[0][:200]}")
