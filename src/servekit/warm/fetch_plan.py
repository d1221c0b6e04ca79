"""For one artifact: the exact files to fetch, their sizes, and which are already cached.

Online, the repo is listed on the hub and the weight index read, so the answer is exact. When
the hub cannot be reached, servekit's manifest of an earlier download (or the listing
``huggingface_hub`` cached) stands in; with neither, the answer is a set of patterns.
"""

from __future__ import annotations

import json
from dataclasses import field
from pathlib import Path

from servekit.records import record
from servekit.warm.artifacts import Artifact
from servekit.warm.file_rules import FileSelection, patterns_for, restrict_to_index, select_from_listing
from servekit.warm.hub import (
    HubSettings,
    HubUnreachable,
    RemoteFile,
    RepoListing,
    cached_commit,
    fetch_file,
    list_repo,
    listing_from_cache,
    snapshot_path,
)
from servekit.warm.manifest import read_manifest


@record
class RepoFetch:
    artifact: Artifact
    selection: FileSelection
    commit: str | None = None
    listing_source: str | None = None  # hub | manifest | cache | None (patterns only)
    files: tuple[RemoteFile, ...] = ()
    cached: frozenset[str] = frozenset()
    unreachable: str | None = None  # why the hub was not asked / not answering
    prefetched: tuple[str, ...] = ()  # fetched into the cache while planning (the weight index)
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def missing(self) -> tuple[RemoteFile, ...]:
        return tuple(f for f in self.files if f.path not in self.cached)

    @property
    def missing_bytes(self) -> int:
        return sum(f.size for f in self.missing)

    def to_dict(self) -> dict:
        doc = {
            **self.artifact.to_dict(),
            "commit": self.commit,
            "listing": self.listing_source,
            "weight_format": self.selection.weight_format or self.artifact.weight_format,
            "notes": list(self.selection.notes + self.notes),
        }
        if self.selection.exact:
            doc["files"] = [{"path": f.path, "size": f.size, "cached": f.path in self.cached} for f in self.files]
            doc["bytes"] = self.total_bytes
            doc["bytes_to_download"] = self.missing_bytes
            doc["skipped"] = list(self.selection.skipped)
        elif not self.artifact.local:
            doc["allow_patterns"] = list(self.selection.allow_patterns)
            doc["ignore_patterns"] = list(self.selection.ignore_patterns)
        if self.unreachable:
            doc["hub"] = self.unreachable
        return doc


def _offline_listing(settings: HubSettings, artifact: Artifact) -> RepoListing | None:
    commit = cached_commit(settings, artifact.repo_id, artifact.revision)
    if commit is None:
        return None
    manifest = read_manifest(artifact.repo_id, commit)
    if manifest is not None:
        files = {f.path: f for f in manifest.files}
        return RepoListing(artifact.repo_id, artifact.revision, commit, files, "manifest")
    cached = listing_from_cache(settings, artifact.repo_id, artifact.revision)
    return cached if cached is not None else _snapshot_listing(settings, artifact, commit)


def _snapshot_listing(settings: HubSettings, artifact: Artifact, commit: str) -> RepoListing | None:
    """The files of a snapshot another tool downloaded (no record of the repo's full listing)."""
    folder = snapshot_path(settings, artifact.repo_id, commit, "")
    if not folder.is_dir():
        return None
    files = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
    listed = {rel: RemoteFile(rel, path.stat().st_size) for rel, path in files.items()}
    return RepoListing(artifact.repo_id, artifact.revision, commit, listed, "snapshot")


def _weight_map(
    settings: HubSettings, listing: RepoListing, index: str, scratch: Path | None
) -> tuple[dict | None, bool]:
    """(the index's weight map or None, whether it was just fetched into the cache)."""
    local = snapshot_path(settings, listing.repo_id, listing.commit, index)
    fetched = False
    if not local.is_file():
        if listing.source != "hub":
            return None, False
        local = fetch_file(settings, listing.repo_id, listing.commit, index, cache_dir=scratch)
        fetched = scratch is None
    try:
        doc = json.loads(local.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, fetched
    weight_map = doc.get("weight_map") if isinstance(doc, dict) else None
    return (weight_map if isinstance(weight_map, dict) else None), fetched


def plan_fetch(settings: HubSettings, artifact: Artifact, *, scratch: Path | None = None) -> RepoFetch:
    """What to fetch for ``artifact``; ``scratch`` receives the index in a dry run (not the cache)."""
    if artifact.local:
        return RepoFetch(artifact, FileSelection(), notes=("a local path: nothing to download",))
    unreachable = None
    try:
        listing: RepoListing | None = list_repo(settings, artifact.repo_id, artifact.revision)
    except HubUnreachable as exc:
        unreachable = str(exc)
        listing = _offline_listing(settings, artifact)
    if listing is None:
        return RepoFetch(artifact, patterns_for(artifact.role, artifact.weight_format), unreachable=unreachable)
    selection = select_from_listing(listing.files, artifact.role, artifact.weight_format)
    notes: tuple[str, ...] = ()
    prefetched: tuple[str, ...] = ()
    if selection.index:
        weight_map, fetched = _weight_map(settings, listing, selection.index, scratch)
        prefetched = (selection.index,) if fetched else ()
        if weight_map is None:
            notes = (f"{selection.index} is not cached: every root shard is counted",)
        else:
            known = dict(listing.files)
            if listing.source == "snapshot":  # shards the index names but the snapshot lacks are missing
                known.update({s: RemoteFile(s, -1) for s in weight_map.values() if s not in known})
            selection = restrict_to_index(selection, weight_map, known)
            listing = RepoListing(listing.repo_id, listing.revision, listing.commit, known, listing.source)
    files = tuple(listing.files[p] for p in selection.files)
    cached = frozenset(
        f.path for f in files if snapshot_path(settings, artifact.repo_id, listing.commit, f.path).is_file()
    )
    return RepoFetch(
        artifact,
        selection,
        listing.commit,
        listing.source,
        files,
        cached,
        unreachable=unreachable,
        prefetched=prefetched,
        notes=notes,
    )
