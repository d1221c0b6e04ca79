"""The Hugging Face hub as servekit sees it: endpoint, cache folder, offline mode, listings.

``huggingface_hub`` reads ``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE`` once, at import;
servekit reads them at call time (``servekit.hfcache``) and passes endpoint and cache folder
explicitly, so a change of environment (a test, a second command in one process) is always honoured.
"""

from __future__ import annotations

import os
from pathlib import Path

from servekit.errors import ServekitError
from servekit.hfcache import hub_cache_dir, offline_requested
from servekit.records import record

DEFAULT_ENDPOINT = "https://huggingface.co"


class HubError(ServekitError):
    """The hub refused a request (repo or revision not found, gated, server error)."""


class HubUnreachable(Exception):
    """The hub cannot be reached or offline mode is on; callers fall back to the cache."""


@record
class HubSettings:
    endpoint: str
    cache_dir: Path
    offline: bool
    token: str | None = None  # None: huggingface_hub finds one (HF_TOKEN, the saved login)

    @classmethod
    def from_env(
        cls, *, endpoint: str | None = None, cache_dir: str | Path | None = None, offline: bool | None = None
    ) -> HubSettings:
        return cls(
            endpoint=(endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            cache_dir=Path(cache_dir) if cache_dir else hub_cache_dir(),
            offline=offline_requested() if offline is None else offline,
            token=os.environ.get("HF_TOKEN") or None,
        )


@record
class RemoteFile:
    path: str
    size: int
    sha256: str | None = None  # LFS files
    blob_id: str | None = None  # git blob sha1

    def to_dict(self) -> dict:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "blob_id": self.blob_id}


@record
class RepoListing:
    repo_id: str
    revision: str
    commit: str
    files: dict[str, RemoteFile]
    source: str  # "hub" | "manifest" | "cache"


def storage_folder(settings: HubSettings, repo_id: str) -> Path:
    """The repo's folder in the documented cache layout: ``models--org--name``."""
    return settings.cache_dir / ("models--" + repo_id.replace("/", "--"))


def cached_commit(settings: HubSettings, repo_id: str, revision: str) -> str | None:
    """The commit a revision resolved to at the last download (``refs/<rev>``), or the hash itself."""
    if len(revision) == 40 and all(c in "0123456789abcdef" for c in revision):
        return revision
    ref = storage_folder(settings, repo_id) / "refs" / revision
    try:
        return ref.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def snapshot_path(settings: HubSettings, repo_id: str, commit: str, path: str) -> Path:
    return storage_folder(settings, repo_id) / "snapshots" / commit / path


def _classify(exc: Exception, repo_id: str, revision: str) -> Exception:
    """A hub error as servekit's: HubError for refusals, HubUnreachable for no connection."""
    import httpx2
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return HubError(f"{repo_id} is gated on the hub", fix="accept its terms on the hub and set HF_TOKEN")
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(f"{repo_id} has no revision {revision!r}", fix="check the revision in the plan")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(f"{repo_id} was not found on the hub", fix="check the repo id; private repos need HF_TOKEN")
    if isinstance(exc, errors.HfHubHTTPError):
        return HubError(f"the hub answered an error for {repo_id}: {str(exc).splitlines()[0]}")
    if isinstance(exc, (httpx2.TransportError, OSError)):
        return HubUnreachable(f"the hub is unreachable ({type(exc).__name__})")
    return exc


def call_hub(fn, repo_id: str, revision: str):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - classified, unknown errors re-raised as they are
        classified = _classify(exc, repo_id, revision)
        if classified is exc:
            raise
        raise classified from None


def list_repo(settings: HubSettings, repo_id: str, revision: str = "main") -> RepoListing:
    """Every file of the repo at ``revision``, with sizes and hashes, from the hub."""
    if settings.offline:
        raise HubUnreachable("HF_HUB_OFFLINE is set")
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=settings.endpoint, token=settings.token)

    def listing() -> tuple[str, dict[str, RemoteFile]]:
        commit = api.repo_info(repo_id, revision=revision).sha
        entries = api.list_repo_tree(repo_id, revision=commit, recursive=True)
        return commit, {
            e.path: RemoteFile(e.path, e.size, e.lfs.sha256 if e.lfs else None, e.blob_id)
            for e in entries
            if isinstance(e, RepoFile)
        }

    commit, files = call_hub(listing, repo_id, revision)
    return RepoListing(repo_id, revision, commit, files, "hub")


def listing_from_cache(settings: HubSettings, repo_id: str, revision: str) -> RepoListing | None:
    """The listing ``huggingface_hub`` stored at the last download (sizes only), if any."""
    from huggingface_hub import get_cached_repo_tree
    from huggingface_hub.errors import CachedRepoTreeNotFoundError

    commit = cached_commit(settings, repo_id, revision)
    if commit is None:
        return None
    try:
        entries = get_cached_repo_tree(repo_id, revision=commit, cache_dir=settings.cache_dir)
    except (CachedRepoTreeNotFoundError, OSError, ValueError):
        return None
    files = {e.path: RemoteFile(e.path, e.size, None, e.blob_id) for e in entries}
    return RepoListing(repo_id, revision, commit, files, "cache")


def fetch_file(settings: HubSettings, repo_id: str, commit: str, path: str, cache_dir: Path | None = None) -> Path:
    """One small file (a weight index) at an exact commit, into ``cache_dir`` (default: the cache)."""
    if settings.offline:
        raise HubUnreachable("HF_HUB_OFFLINE is set")
    from huggingface_hub import hf_hub_download

    def fetch() -> str:
        return hf_hub_download(
            repo_id,
            path,
            revision=commit,
            cache_dir=cache_dir or settings.cache_dir,
            endpoint=settings.endpoint,
            token=settings.token,
        )

    return Path(call_hub(fetch, repo_id, commit))
