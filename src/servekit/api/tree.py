"""An in-memory JSON file tree that is written to disk in one atomic swap.

The builder adds documents by their path inside the tree (``Qwen/Qwen3-8B/hw/h200.json``),
may drop a whole subtree again (a later rendering of the same model id replaces an earlier
one), and finally writes everything into a fresh directory beside the target and swaps it
into place (``servekit.api.commit``). A failed build leaves the previous tree untouched and no
debris behind.

Documents are encoded when added (compact UTF-8 JSON), so a caller may keep
mutating its own objects afterwards without changing what was recorded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from servekit.atomic import write_staged
from servekit.errors import ServekitError

_stdlib_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency; stay correct without it
    _orjson = None


class ApiTreeError(ServekitError):
    """The output directory cannot be written or replaced."""


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, the form every file of the tree is written in.

    orjson is several times faster than the standard library on these documents; whatever it
    refuses (integers past 64 bits, non-string keys) goes through the standard encoder.
    """
    if _orjson is not None:
        try:
            return _orjson.dumps(value)
        except TypeError:
            pass
    return _stdlib_encode(value).encode("utf-8")


class JsonTree:
    """Relative path -> encoded JSON document, in insertion order."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}
        self._by_top: dict[str, set[str]] = {}
        """Paths by their first two components (``org/name``), for fast subtree drops."""

    def put(self, rel_path: str, value: Any) -> None:
        self._files[rel_path] = encode_json(value)
        parts = rel_path.split("/", 2)
        if len(parts) == 3:
            self._by_top.setdefault(f"{parts[0]}/{parts[1]}", set()).add(rel_path)

    def drop_subtree(self, rel_dir: str) -> None:
        """Forget every file under ``rel_dir/`` (not ``rel_dir.json`` itself)."""
        prefix = rel_dir.strip("/") + "/"
        top = "/".join(prefix.split("/", 2)[:2])
        candidates = self._by_top.get(top, set()) if prefix.count("/") >= 2 else set(self._files)
        for path in [p for p in candidates if p.startswith(prefix)]:
            del self._files[path]
            owner = path.split("/", 2)
            if len(owner) == 3:
                self._by_top[f"{owner[0]}/{owner[1]}"].discard(path)

    def __contains__(self, rel_path: object) -> bool:
        return rel_path in self._files

    def __len__(self) -> int:
        return len(self._files)

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def items(self) -> Iterator[tuple[str, bytes]]:
        """(path, encoded document) of every file, in insertion order."""
        return iter(self._files.items())

    def get(self, rel_path: str) -> Any:
        """The decoded document at ``rel_path`` (for tests and inspection)."""
        return json.loads(self._files[rel_path])

    def raw(self, rel_path: str) -> bytes:
        """The encoded document at ``rel_path``: the bytes the file holds once written."""
        return self._files[rel_path]

    def total_bytes(self) -> int:
        return sum(len(b) for b in self._files.values())

    def write_into(self, root: Path) -> None:
        """Write every file below the existing directory ``root``."""
        made: set[str] = set()
        base = str(root)
        try:
            for rel, data in self._files.items():
                parent = rel.rpartition("/")[0]
                if parent and parent not in made:
                    os.makedirs(os.path.join(base, parent), exist_ok=True)
                    _remember_parents(parent, made)
                write_staged(os.path.join(base, rel), data)
        except OSError as exc:
            raise ApiTreeError(
                f"cannot write {exc.filename or root}: {exc.strerror}",
                fix="check free space and permissions next to --out",
            ) from None

    def publish(self, out_dir: Path) -> None:
        """Write the tree beside ``out_dir`` and swap it into place atomically."""
        from servekit.api.commit import commit_full, staged  # they build on this module
        from servekit.api.output import locked

        check_target(Path(out_dir))
        with locked(Path(out_dir)) as output, staged(output) as stage:
            self.write_into(stage)
            commit_full(output, stage)


def _remember_parents(rel_dir: str, made: set[str]) -> None:
    while rel_dir and rel_dir not in made:
        made.add(rel_dir)
        rel_dir = rel_dir.rpartition("/")[0]


def check_target(out_dir: Path) -> None:
    """Fail early when ``out_dir`` can never be replaced by a directory."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ApiTreeError(f"--out {out_dir} exists and is not a directory", fix="pass a directory path")
    blocker = next((p for p in out_dir.absolute().parents if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise ApiTreeError(f"--out {out_dir} lies under {blocker}, which is a file, not a directory",
                           fix="pass a directory path whose parents are directories")
