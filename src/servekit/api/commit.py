"""Apply a set of file changes to an existing API tree: all of them or none.

``commit_changes`` first writes every new file into a staging directory next to the tree
(nothing in the tree changes; a failure there removes the staging directory and stops). Then
it moves each new file into place with ``os.replace`` (each file changes atomically: a reader
sees the old or the new bytes, never a mix), keeping a hard link to each file it replaces, and
moves each stale file into the staging directory. If anything fails during that step (an
exception, Ctrl-C), every replaced file is put back, every added file and directory removed and
every deleted file restored, so the tree is exactly what it was. Only a killed process can
leave the tree partly updated; the caller removes the manifest first, so the next build then
rebuilds the whole tree.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from servekit.api.tree import ApiTreeError

_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


@dataclass
class _Journal:
    """What the rename step did so far, to undo it."""

    replaced: list[tuple[str, str | None]] = field(default_factory=list)
    """(path in the tree, backup of the file it replaced or None when it was new)."""
    deleted: list[tuple[str, str]] = field(default_factory=list)
    """(path in the tree, where the removed file was moved)."""
    made_dirs: list[str] = field(default_factory=list)


def commit_changes(out_dir: Path, writes: dict[str, bytes], deletes: list[str]) -> None:
    """Write ``writes`` (relative path -> bytes) into ``out_dir`` and remove ``deletes``."""
    base = str(out_dir)
    staging = _make_staging(out_dir)
    try:
        staged = _stage(staging, writes)
        journal = _Journal()
        try:
            _apply(base, staging, staged, deletes, journal)
        except BaseException:
            _undo(base, journal)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _make_staging(out_dir: Path) -> str:
    try:
        return tempfile.mkdtemp(prefix=f".{out_dir.name}.updating-", dir=out_dir.parent)
    except OSError as exc:
        raise ApiTreeError(f"cannot create a directory next to {out_dir}: {exc.strerror}",
                           fix="choose an --out directory whose parent is writable") from None


def _stage(staging: str, writes: dict[str, bytes]) -> list[tuple[str, str]]:
    """Write each new file into ``staging``; (path in the tree, staged file)."""
    staged = []
    try:
        for number, (rel, data) in enumerate(writes.items()):
            temp = os.path.join(staging, f"new-{number}")
            fd = os.open(temp, _WRITE_FLAGS, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            staged.append((rel, temp))
    except OSError as exc:
        raise ApiTreeError(f"cannot write {exc.filename or staging}: {exc.strerror}",
                           fix="check free space and permissions next to --out") from None
    return staged


def _apply(base: str, staging: str, staged: list[tuple[str, str]], deletes: list[str],
           journal: _Journal) -> None:
    try:
        for number, (rel, temp) in enumerate(staged):
            target = os.path.join(base, rel)
            _make_parents(base, rel, journal)
            backup: str | None = os.path.join(staging, f"old-{number}")
            try:
                os.link(target, backup)
            except FileNotFoundError:
                backup = None
            os.replace(temp, target)
            journal.replaced.append((rel, backup))
        for number, rel in enumerate(deletes):
            moved = os.path.join(staging, f"gone-{number}")
            try:
                os.replace(os.path.join(base, rel), moved)
            except FileNotFoundError:
                continue
            journal.deleted.append((rel, moved))
        _prune_empty_dirs(base, [rel for rel, _ in journal.deleted])
    except OSError as exc:
        raise ApiTreeError(f"cannot update {exc.filename or base}: {exc.strerror}",
                           fix="check free space and permissions in --out") from None


def _make_parents(base: str, rel: str, journal: _Journal) -> None:
    missing = []
    parent = rel.rpartition("/")[0]
    while parent and not os.path.isdir(os.path.join(base, parent)):
        missing.append(parent)
        parent = parent.rpartition("/")[0]
    for folder in reversed(missing):
        os.mkdir(os.path.join(base, folder))
        journal.made_dirs.append(folder)


def _prune_empty_dirs(base: str, removed: list[str]) -> None:
    """Remove directories left empty by deleted files (deepest first)."""
    folders = {rel.rpartition("/")[0] for rel in removed}
    candidates: set[str] = set()
    for folder in folders:
        while folder:
            candidates.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(candidates, key=lambda f: -f.count("/")):
        try:
            os.rmdir(os.path.join(base, folder))
        except OSError:
            pass  # not empty


def _undo(base: str, journal: _Journal) -> None:
    """Put the tree back as it was before ``_apply`` started."""
    for rel, moved in reversed(journal.deleted):
        target = os.path.join(base, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.replace(moved, target)
    for rel, backup in reversed(journal.replaced):
        target = os.path.join(base, rel)
        if backup is None:
            os.unlink(target)
        else:
            os.replace(backup, target)
    for folder in reversed(journal.made_dirs):
        try:
            os.rmdir(os.path.join(base, folder))
        except OSError:
            pass
