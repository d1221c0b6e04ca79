"""Catalog documents already parsed, kept as JSON under servekit's home, so a cold ``servekit plan``
reads JSON instead of loading the YAML parser and parsing the same files again.

An entry holds the plain documents read from one or more catalog files (``documents.normalise``
output, which JSON keeps exactly) and the stamp of those files: name, size, modification and
change times in nanoseconds, inode. It is used only while every file still has that stamp, so an
edit, a replaced file or a changed permission makes it a miss and the files are parsed again. An
entry is written only after the files parsed cleanly; a cache that cannot be read or written is
a miss, never an error. Entries live in ``<servekit home>/parsed-catalog/``, one file per key
(the catalog directory for its shared documents, the file for a recipe).
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servekit.atomic import write_bytes_atomic
from servekit.paths import home

FORMAT = 1

Stamp = list[list[Any]]


def cache_dir() -> Path:
    return home() / "parsed-catalog"


def stamp(paths: Sequence[Path]) -> Stamp | None:
    """Each file's name, size, mtime, ctime (ns) and inode; None when one cannot be read."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return None
        out.append([str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino])
    return out


def _entry_path(key: Path) -> Path:
    text = str(Path(key).resolve())
    return cache_dir() / f"{zlib.crc32(text.encode()):08x}-{zlib.adler32(text.encode()):08x}.json"


def load(key: Path, files: Stamp | None) -> Any | None:
    """The documents stored for ``key`` when its files still have the stamp ``files``, else None."""
    if files is None:
        return None
    try:
        entry = json.loads(_entry_path(key).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != str(Path(key).resolve()):
        return None
    return entry.get("value") if entry.get("files") == files else None


def save(key: Path, files: Stamp | None, value: Any) -> None:
    """Store ``value`` for ``key`` under the files' stamp taken before they were read (best effort)."""
    if files is None:
        return
    entry = {"format": FORMAT, "key": str(Path(key).resolve()), "files": files, "value": value}
    try:
        write_bytes_atomic(_entry_path(key), json.dumps(entry, separators=(",", ":")).encode("utf-8"))
    except (OSError, TypeError, ValueError):
        pass  # a read-only home, a full disk or an unencodable value: the files are parsed next time
