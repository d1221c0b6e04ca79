"""The mirror: a second copy of the tree made of hard links, where the next version is prepared.

Every file of the mirror is a hard link to the tree's file at the same path, so the mirror
costs a directory entry per file, not the bytes, and shares the tree's directories' layout (so
a rebuild creates no directories but those of new files). A file shared that way is never
written in place: a path gets a new version as a new file (unlink, then create or link), so
changing the mirror never changes the tree.

``mirror_all`` makes the mirror equal to the tree whatever it held (a full build);
``update_paths`` changes only the given paths (an incremental build).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from servekit.api.manifest import tree_entries
from servekit.api.tree import ApiTreeError
from servekit.atomic import write_staged

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


def _parents(files: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for rel in files:
        folder = rel.rpartition("/")[0]
        while folder and folder not in out:
            out.add(folder)
            folder = folder.rpartition("/")[0]
    return out


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
    candidates = _parents({f"{folder}/x" for folder in folders if folder})
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
