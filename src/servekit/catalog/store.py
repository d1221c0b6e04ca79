"""Where a synced catalog lives under servekit's home, and how a new copy replaces the old one.

Layout (under ``servekit.paths.home() / "catalogs"``)::

    recipes/current          symlink to the snapshot in use (replaced atomically)
    recipes/snapshots/ID/    catalog/ (the catalog root) and sync.json (its record)
    recipes/staging-*/       a sync in progress (or one that was killed; removed by the next)
    recipes.lock             held while a sync runs

A reader follows ``current`` once; a sync builds a whole snapshot beside it and then swaps the
link, so an interrupted or failed sync never touches the copy in use.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from servekit.atomic import file_lock, write_json_atomic
from servekit.errors import ServekitError
from servekit.paths import home
from servekit.records import record

if TYPE_CHECKING:
    from datetime import datetime

STORE_NAME = "recipes"
RECORD_FILE = "sync.json"
CATALOG_FOLDER = "catalog"
STAGING_PREFIX = "staging-"


@record
class SyncRecord:
    """What a synced copy is: where it came from, which revision, how many files, when."""

    source: str
    kind: str
    """``archive-url``, ``git``, ``archive`` (a local file) or ``directory``."""
    revision: str
    content_hash: str
    file_count: int
    recipe_count: int
    synced_at: str
    """ISO 8601, UTC."""
    warnings: int = 0

    def age_seconds(self, now: datetime | None = None) -> float:
        from datetime import datetime, timezone  # stdlib; a plan never asks a snapshot's age

        return ((now or datetime.now(timezone.utc)) - datetime.fromisoformat(self.synced_at)).total_seconds()

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def store_dir() -> Path:
    return home() / "catalogs" / STORE_NAME


def lock_path() -> Path:
    return home() / "catalogs" / f"{STORE_NAME}.lock"


def current_snapshot() -> Path | None:
    """The snapshot in use, or None before the first sync."""
    link = store_dir() / "current"
    target = link.resolve() if link.is_symlink() else None
    return target if target is not None and (target / CATALOG_FOLDER).is_dir() else None


def synced_catalog_root() -> Path | None:
    """The synced catalog's root folder (the one holding models/ and taxonomy.yaml), if any."""
    snapshot = current_snapshot()
    return snapshot / CATALOG_FOLDER if snapshot is not None else None


def read_record(snapshot: Path | None = None) -> SyncRecord | None:
    """The record of ``snapshot`` (default: the one in use); None when there is none or it is unreadable."""
    snapshot = snapshot or current_snapshot()
    if snapshot is None:
        return None
    try:
        data = json.loads((snapshot / RECORD_FILE).read_text(encoding="utf-8"))
        return SyncRecord(**data)
    except (OSError, ValueError, TypeError):
        return None



def catalog_files(root: Path) -> list[Path]:
    """Every regular file of a catalog tree, sorted, skipping version-control folders."""
    files = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in {".git", ".hg", ".svn"} or not path.is_file():
            continue
        files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def content_hash(root: Path) -> tuple[str, int]:
    """sha256 over every file's relative path and bytes, and the file count."""
    import hashlib  # only a sync hashes: loading OpenSSL is not free for every plan that reads the store

    digest = hashlib.sha256()
    files = catalog_files(root)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"sha256:{digest.hexdigest()}", len(files)


@contextlib.contextmanager
def sync_lock() -> Iterator[None]:
    """Hold the store's lock; a second sync while one runs is refused, not queued."""
    path = lock_path()
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(file_lock(path, wait=False))
        except BlockingIOError:
            raise ServekitError(
                "another `servekit catalog sync` is running",
                fix=f"wait for it to finish (it holds {path})",
            ) from None
        yield


def new_staging() -> Path:
    """A fresh folder beside the store's snapshots, on the same file system."""
    import tempfile  # stdlib (shutil, random, bz2, lzma behind it): a sync needs it, a plan reading the store does not

    folder = store_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=folder, prefix=STAGING_PREFIX))


def remove_leftovers() -> None:
    """Staging folders of syncs that were killed, and snapshots no longer in use (lock held).

    Run when a sync starts, not right after the swap, so that a reader which followed the old
    link a moment before the swap can still finish reading the old snapshot."""
    import shutil  # stdlib: a sync needs it, a plan reading the store does not

    folder = store_dir()
    in_use = current_snapshot()
    for path in folder.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True)
    for path in (folder / "snapshots").glob("*") if (folder / "snapshots").is_dir() else ():
        if in_use is None or path.resolve() != in_use:
            shutil.rmtree(path, ignore_errors=True)


def publish(staging: Path, sync_record: SyncRecord) -> Path:
    """Turn a complete staging folder into the snapshot in use with one atomic link swap."""
    write_json_atomic(staging / RECORD_FILE, sync_record.to_json())
    snapshots = store_dir() / "snapshots"
    snapshots.mkdir(parents=True, exist_ok=True)
    from datetime import datetime, timezone  # stdlib; only a sync publishes

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    snapshot = snapshots / f"{stamp}-{sync_record.content_hash.split(':')[-1][:12]}"
    os.rename(staging, snapshot)
    link = store_dir() / "current"
    tmp_link = store_dir() / f".current.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp_link)
    os.symlink(Path("snapshots") / snapshot.name, tmp_link)
    os.replace(tmp_link, link)
    return snapshot


def describe_age(seconds: float) -> str:
    """``3 minutes``, ``2 hours``, ``5 days``: a plain age for people."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "less than a minute"
