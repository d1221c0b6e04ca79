"""servekit's record of what it fetched for a repo commit: files, sizes, hashes.

Written after a verified download under ``<SERVEKIT_HOME>/warm/manifests``, read when the hub
cannot be reached: offline, the exact list of files the engine needs is still known, and
completeness (and hashes) can be checked without the network.
"""

from __future__ import annotations

import json
from dataclasses import field
from pathlib import Path

from servekit import paths
from servekit.atomic import write_json_atomic
from servekit.records import record
from servekit.warm.hub import RemoteFile

MANIFEST_VERSION = 1


@record
class Manifest:
    repo_id: str
    commit: str
    role: str
    weight_format: str
    index: str | None
    files: tuple[RemoteFile, ...]
    # path -> (size, mtime_ns, inode) of the cached file when its hash was last checked
    stamps: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "version": MANIFEST_VERSION,
            "repo_id": self.repo_id,
            "commit": self.commit,
            "role": self.role,
            "weight_format": self.weight_format,
            "index": self.index,
            "files": [f.to_dict() for f in self.files],
            "stamps": {path: list(stamp) for path, stamp in self.stamps.items()},
        }


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What identifies a file's content without reading it: size, modification time, inode."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def manifest_dir() -> Path:
    return paths.home() / "warm" / "manifests"


def manifest_path(repo_id: str, commit: str) -> Path:
    return manifest_dir() / f"{repo_id.replace('/', '--')}@{commit}.json"


def write_manifest(manifest: Manifest) -> Path:
    """Atomically: a temp file in the same folder, then rename."""
    target = manifest_path(manifest.repo_id, manifest.commit)
    write_json_atomic(target, manifest.to_dict())
    return target


def read_manifest(repo_id: str, commit: str) -> Manifest | None:
    """The manifest for this repo commit; None when absent, unreadable or from a newer servekit."""
    try:
        doc = json.loads(manifest_path(repo_id, commit).read_text(encoding="utf-8"))
        if doc.get("version") != MANIFEST_VERSION:
            return None
        files = tuple(RemoteFile(f["path"], int(f["size"]), f.get("sha256"), f.get("blob_id")) for f in doc["files"])
        stamps = {path: (int(v[0]), int(v[1]), int(v[2])) for path, v in (doc.get("stamps") or {}).items()}
        return Manifest(
            doc["repo_id"], doc["commit"], doc["role"], doc["weight_format"], doc.get("index"), files, stamps
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
