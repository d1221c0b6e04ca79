"""Is a repo's snapshot in the cache complete and intact for the engine?

Every selected file must be present with the listed size; LFS files (weights) must match the
sha256 the hub publishes, small git files their git blob sha1. Every shard the weight index
names must be among them. A bad file can be removed (pointer and blob) so the next download
fetches it again instead of trusting the broken copy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from servekit.records import record
from servekit.warm.fetch_plan import RepoFetch
from servekit.warm.hub import HubSettings, RemoteFile, snapshot_path
from servekit.warm.manifest import file_stamp

_CHUNK = 8 * 1024 * 1024
GIT_HASH_LIMIT = 64 * 1024 * 1024  # git blob ids are only checked for small (non-LFS) files


@record
class FileProblem:
    path: str
    problem: str  # missing | size | sha256 | git-sha1 | index
    expected: str | None = None
    actual: str | None = None

    def describe(self) -> str:
        if self.problem == "missing":
            return f"{self.path}: missing"
        return f"{self.path}: {self.problem} is {self.actual}, expected {self.expected}"

    def to_dict(self) -> dict:
        return {"path": self.path, "problem": self.problem, "expected": self.expected, "actual": self.actual}


@record
class RepoVerification:
    repo_id: str
    commit: str | None
    checked: int
    hashed: int
    problems: tuple[FileProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "checked": self.checked,
            "hashed": self.hashed,
            "problems": [p.to_dict() for p in self.problems],
        }


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def git_blob_id(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_file(
    local: Path, remote: RemoteFile, hashes: bool, trusted: tuple[int, int, int] | None = None
) -> tuple[FileProblem | None, bool]:
    """(problem or None, whether a hash was computed); ``trusted`` = stamp of an earlier good hash."""
    if not local.is_file():
        return FileProblem(remote.path, "missing"), False
    size = local.stat().st_size
    if size != remote.size:
        return FileProblem(remote.path, "size", str(remote.size), str(size)), False
    if not hashes or (trusted is not None and file_stamp(local) == trusted):
        return None, False
    if remote.sha256:
        actual = sha256_of(local)
        return (None if actual == remote.sha256 else FileProblem(remote.path, "sha256", remote.sha256, actual)), True
    if remote.blob_id and size <= GIT_HASH_LIMIT:
        actual = git_blob_id(local)
        return (
            None if actual == remote.blob_id else FileProblem(remote.path, "git-sha1", remote.blob_id, actual)
        ), True
    return None, False


def _index_problems(settings: HubSettings, fetch: RepoFetch) -> list[FileProblem]:
    index = fetch.selection.index
    if not index or fetch.commit is None:
        return []
    local = snapshot_path(settings, fetch.artifact.repo_id, fetch.commit, index)
    try:
        weight_map = json.loads(local.read_text(encoding="utf-8")).get("weight_map", {})
    except (OSError, ValueError, AttributeError):
        return []  # the index itself is reported by the per-file check
    selected = {f.path for f in fetch.files}
    return [
        FileProblem(shard, "index", "named by " + index, "not selected")
        for shard in sorted(set(weight_map.values()))
        if shard not in selected
    ]


def verify_repo(
    settings: HubSettings,
    fetch: RepoFetch,
    *,
    hashes: bool = True,
    trusted: dict[str, tuple[int, int, int]] | None = None,
) -> RepoVerification:
    """Check the snapshot of ``fetch.commit`` against the listing the files were selected from.

    Files whose stamp equals the one ``trusted`` recorded after an earlier good hash are not
    hashed again (their size is still checked).
    """
    problems: list[FileProblem] = []
    hashed = 0
    for remote in fetch.files:
        local = snapshot_path(settings, fetch.artifact.repo_id, fetch.commit or "", remote.path)
        problem, did_hash = check_file(local, remote, hashes, (trusted or {}).get(remote.path))
        hashed += did_hash
        if problem:
            problems.append(problem)
    problems += _index_problems(settings, fetch)
    return RepoVerification(fetch.artifact.repo_id, fetch.commit, len(fetch.files), hashed, tuple(problems))


def discard(settings: HubSettings, repo_id: str, commit: str, path: str) -> None:
    """Remove a bad file from the cache: the snapshot pointer and the blob it points to."""
    pointer = snapshot_path(settings, repo_id, commit, path)
    blob = pointer.resolve() if pointer.is_symlink() else None
    pointer.unlink(missing_ok=True)
    if blob is not None and blob != pointer:
        blob.unlink(missing_ok=True)
