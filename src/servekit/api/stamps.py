"""Directory stamps: telling that nobody added, removed or renamed a file of a tree without
listing the tree.

Creating, removing or renaming an entry of a directory sets the directory's change time
(``st_ctime_ns``, which no user call can set back). So a directory whose change time is what a
build recorded still holds the entries it held then, provided the recorded time is clearly in
the past of the moment it was read: a change made in the same clock tick as the recorded one
could leave the same time behind (file systems stamp with a coarse clock). A stamp is
therefore kept only when it is at least ``MARGIN_NS`` older than the moment it was read
(``None`` otherwise); a directory without one, and the tree's root (renamed by every swap),
is listed and compared with the manifest's files instead. A rebuild after a recipe edit thus
stats the tree's directories and lists the few the last build touched, where a listing of
every directory read several times as much from the disk.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

MARGIN_NS = 1_000_000_000
"""How much older than the moment it is read a change time must be to prove anything."""

Stamps = dict[str, int | None]
"""Directory (relative, ``/``-separated; the root is never in it) -> change time, or None."""


def dirs_of(files: Iterable[str]) -> set[str]:
    """Every folder (and folder of a folder) of the given relative file paths."""
    out: set[str] = set()
    for rel in files:
        folder = rel.rpartition("/")[0]
        while folder and folder not in out:
            out.add(folder)
            folder = folder.rpartition("/")[0]
    return out


def read_stamps(root: Path, dirs: Iterable[str]) -> Stamps:
    """The stamp of each directory below ``root`` (None: too recent, or missing)."""
    base, now = str(root), time.time_ns()
    out: Stamps = {}
    for rel in dirs:
        try:
            changed = os.stat(os.path.join(base, rel)).st_ctime_ns
        except OSError:
            out[rel] = None
            continue
        out[rel] = changed if changed < now - MARGIN_NS else None
    return out


def verified(root: Path, stamps: Mapping[str, int | None], files: set[str]) -> Stamps | None:
    """The tree's stamps read now when its directories hold exactly ``files`` (and the
    directories ``stamps`` names), else None."""
    current = read_stamps(root, stamps)
    unproven = [""]
    for rel, recorded in stamps.items():
        if recorded is None:
            unproven.append(rel)
        elif current[rel] != recorded:
            return None
    return current if _listed_match(root, unproven, files, stamps) else None


def _listed_match(root: Path, folders: list[str], files: set[str], dirs: Mapping[str, object]) -> bool:
    """Whether each of ``folders`` lists exactly the files and directories expected in it."""
    wanted: dict[str, set[str]] = {folder: set() for folder in folders}
    for rel in [*files, *dirs]:
        folder, _, name = rel.rpartition("/")
        if folder in wanted:
            wanted[folder].add(name)
    for folder, names in wanted.items():
        try:
            if set(os.listdir(os.path.join(root, folder) if folder else root)) != names:
                return False
        except OSError:
            return False
    return True


def after_change(root: Path, before: Mapping[str, int | None], dirs: set[str], touched: Iterable[str]) -> Stamps:
    """The stamps of a tree made from one with stamps ``before`` by changing the files
    ``touched``: their folders are read again, as is any directory ``before`` has no stamp of
    (it may be old enough to prove something now)."""
    again = (dirs_of(touched) | {rel for rel in dirs if before.get(rel) is None}) & dirs
    out: Stamps = {rel: before[rel] for rel in dirs if rel not in again}
    out.update(read_stamps(root, again))
    return out
