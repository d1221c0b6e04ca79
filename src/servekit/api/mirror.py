"""The mirror: a second copy of the tree made of hard links, where the next version is prepared.

Every file of the mirror is a hard link to the tree's file at the same path, so the mirror
costs a directory entry per file, not the bytes, and shares the tree's directories' layout (so
a rebuild creates no directories but those of new files). A file shared that way is never
written in place: a path gets a new version as a new file (unlink, then create or link), so
changing the mirror never changes the tree.

``mirror_all`` makes the mirror equal to the tree whatever it held (the first build of a
tree); ``update_paths`` changes only the given paths (an incremental build); ``NextVersion``
makes the mirror hold a full build's files, comparing each with the tree's file at its path:
an equal one stays (or becomes) a link to it, only the others are written. The previous tree,
once swapped out, is then the mirror of the new one, pending exactly at the paths that
differed; so a full build writes only what changed and needs no second pass over the tree.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from pathlib import Path

from servekit.api.manifest import owner_of, tree_entries, tree_inodes
from servekit.api.stamps import dirs_of
from servekit.api.tree import ApiTreeError
from servekit.atomic import write_staged
from servekit.records import record

def mirror_all(tree: Path, mirror: Path) -> None:
    """Make ``mirror`` hold exactly the tree's files, each a link to the tree's file."""
    try:
        if not mirror.is_dir() or mirror.is_symlink():
            _remove(mirror)
            os.mkdir(mirror)
            os.chmod(mirror, 0o755)
        wanted, wanted_dirs = tree_entries(tree)
        have_files, have_dirs = tree_entries(mirror)
        for rel in have_files - wanted:
            os.unlink(os.path.join(mirror, rel))
        for rel in sorted(have_dirs - wanted_dirs, key=len):
            shutil.rmtree(os.path.join(mirror, rel), ignore_errors=True)
        for rel in sorted(wanted_dirs - have_dirs):
            os.mkdir(os.path.join(mirror, rel))
        base, copy = str(tree), str(mirror)
        for rel in wanted:
            target = os.path.join(copy, rel)
            if rel in have_files:
                os.unlink(target)
            os.link(os.path.join(base, rel), target)
    except OSError as exc:
        raise _error(exc) from None


def update_paths(tree: Path, mirror: Path, paths: Iterable[str], writes: Mapping[str, bytes],
                 present: set[str]) -> None:
    """Make each of ``paths`` in ``mirror`` what the next version holds there: the bytes in
    ``writes``, else the tree's file when ``present`` names it, else nothing."""
    base, copy = str(tree), str(mirror)
    emptied: set[str] = set()
    try:
        for rel in paths:
            target = os.path.join(copy, rel)
            _unlink_if_there(target)
            if rel in writes:
                _with_parents(target, lambda: write_staged(target, writes[rel], exclusive=True))
            elif rel in present:
                _with_parents(target, lambda: os.link(os.path.join(base, rel), target))
            else:
                emptied.add(rel.rpartition("/")[0])
        _prune(copy, emptied)
    except OSError as exc:
        raise _error(exc) from None


@record
class NextVersion:
    """The mirror being made into a full build's version of the tree (nothing of the tree
    changes). Made before the build's workers fork, so each of them shares what was scanned."""

    tree: str
    mirror: str
    tree_files: Mapping[str, int]
    """Path -> inode of every file of the tree (0: not a regular file, never reused; empty
    when there is no tree yet)."""
    mirror_files: Mapping[str, int]
    """Path -> inode of every file the mirror held when scanned."""
    mirror_dirs: frozenset[str] = field(default=frozenset())

    @classmethod
    def scan(cls, tree: Path, mirror: Path) -> NextVersion:
        """Both directories as they are; the mirror is created (empty) when missing."""
        try:
            if not mirror.is_dir() or mirror.is_symlink():
                _remove(mirror)
                os.mkdir(mirror)
                os.chmod(mirror, 0o755)
            tree_files = tree_inodes(tree)[0] if tree.is_dir() else {}
            mirror_files, mirror_dirs = tree_inodes(mirror)
        except OSError as exc:
            raise _error(exc) from None
        return cls(str(tree), str(mirror), tree_files, mirror_files, frozenset(mirror_dirs))

    def put(self, files: Iterable[tuple[str, bytes]]) -> list[str]:
        """Make each path of the mirror hold its bytes; returns the paths where they differ
        from the tree's file (or the tree has none)."""
        changed: list[str] = []
        try:
            for rel, data in files:
                target = os.path.join(self.mirror, rel)
                inode = self.tree_files.get(rel)
                if inode and _holds(os.path.join(self.tree, rel), data):
                    if self.mirror_files.get(rel) != inode:
                        _replace(target, lambda: os.link(os.path.join(self.tree, rel), target))
                    continue
                if rel in self.mirror_files:
                    _unlink_if_there(target)
                _replace(target, lambda: write_staged(target, data, exclusive=True))
                changed.append(rel)
        except OSError as exc:
            raise _error(exc) from None
        return changed

    def without(self, owners: set[str]) -> NextVersion:
        """Forget the mirror's files published under ``owners`` (after removing them)."""
        kept = {rel: ino for rel, ino in self.mirror_files.items() if owner_of(rel) not in owners}
        return NextVersion(self.tree, self.mirror, self.tree_files, kept, self.mirror_dirs)

    def finish(self, wanted: set[str]) -> list[str]:
        """Remove what the mirror holds beyond ``wanted`` (every file of the new version);
        returns the tree's files that are not in it."""
        try:
            for rel in self.mirror_files.keys() - wanted:
                _unlink_if_there(os.path.join(self.mirror, rel))
            needed = dirs_of(wanted)
            for rel in sorted(self.mirror_dirs - needed, key=lambda d: -d.count("/")):
                shutil.rmtree(os.path.join(self.mirror, rel), ignore_errors=True)
        except OSError as exc:
            raise _error(exc) from None
        return sorted(self.tree_files.keys() - wanted)


def _holds(path: str, data: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``data``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return os.read(fd, len(data) + 1) == data
    except OSError:
        return False
    finally:
        os.close(fd)


def _replace(target: str, make: Callable[[], object]) -> None:
    """``make()`` the file at ``target``: its folders are created when missing, and whatever
    another worker put there meanwhile (two parts of a build may publish the same id before
    the build redoes them in order) is removed first."""
    for _ in range(3):
        try:
            _with_parents(target, make)
            return
        except FileExistsError:
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target, ignore_errors=True)
            else:
                _unlink_if_there(target)
    _with_parents(target, make)


def _with_parents(target: str, make: Callable[[], object]) -> None:
    """``make()`` the file at ``target``, creating its folders when they are missing."""
    try:
        make()
    except FileNotFoundError:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        make()


def _unlink_if_there(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _prune(root: str, folders: set[str]) -> None:
    """Remove the given folders and their parents while they are empty (deepest first)."""
    candidates = dirs_of({f"{folder}/x" for folder in folders if folder})
    for folder in sorted(candidates, key=lambda f: -f.count("/")):
        try:
            os.rmdir(os.path.join(root, folder))
        except OSError:
            pass  # not empty, or already gone


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _error(exc: OSError) -> ApiTreeError:
    return ApiTreeError(f"cannot update {exc.filename or 'the mirror'}: {exc.strerror}",
                        fix="check free space and permissions next to --out, or run with --full")
