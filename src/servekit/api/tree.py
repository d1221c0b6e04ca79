"""An in-memory JSON file tree that is written to disk in one atomic swap.

The builder adds documents by their path inside the tree (``Qwen/Qwen3-8B/hw/h200.json``),
may drop a whole subtree again (a later rendering of the same model id replaces an earlier
one), and finally writes everything into a fresh temporary directory next to the target and
swaps it into place. A failed build leaves the previous tree untouched and no debris behind.

Documents are encoded when added (compact JSON through the C encoder), so a caller may keep
mutating its own objects afterwards without changing what was recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from servekit.errors import ServekitError

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


class ApiTreeError(ServekitError):
    """The output directory cannot be written or replaced."""


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, the form every file of the tree is written in."""
    return _encode(value).encode("utf-8")


class JsonTree:
    """Relative path -> encoded JSON document, in insertion order."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    def put(self, rel_path: str, value: Any) -> None:
        self._files[rel_path] = encode_json(value)

    def drop_subtree(self, rel_dir: str) -> None:
        """Forget every file under ``rel_dir/`` (not ``rel_dir.json`` itself)."""
        prefix = rel_dir.rstrip("/") + "/"
        stale = [p for p in self._files if p.startswith(prefix)]
        for path in stale:
            del self._files[path]

    def __contains__(self, rel_path: object) -> bool:
        return rel_path in self._files

    def __len__(self) -> int:
        return len(self._files)

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def get(self, rel_path: str) -> Any:
        """The decoded document at ``rel_path`` (for tests and inspection)."""
        return json.loads(self._files[rel_path])

    def total_bytes(self) -> int:
        return sum(len(b) for b in self._files.values())

    def write_into(self, root: Path) -> None:
        """Write every file below an existing, empty directory ``root``."""
        made: set[str] = set()
        base = str(root)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
        for rel, data in self._files.items():
            parent, _, _ = rel.rpartition("/")
            if parent and parent not in made:
                os.makedirs(os.path.join(base, parent), exist_ok=True)
                _remember_parents(parent, made)
            fd = os.open(os.path.join(base, rel), flags, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    def publish(self, out_dir: Path) -> None:
        """Write the tree next to ``out_dir`` and swap it into place atomically."""
        out_dir = Path(out_dir)
        parent = out_dir.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.building-", dir=parent))
        except OSError as exc:
            raise ApiTreeError(
                f"cannot create the output directory next to {out_dir}: {exc.strerror}",
                fix="choose an --out directory whose parent is writable",
            ) from None
        try:
            os.chmod(staging, 0o755)
            try:
                self.write_into(staging)
            except OSError as exc:
                raise ApiTreeError(
                    f"cannot write {exc.filename or staging}: {exc.strerror}",
                    fix="check free space and permissions next to --out",
                ) from None
            _swap_into_place(staging, out_dir)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def _remember_parents(rel_dir: str, made: set[str]) -> None:
    while rel_dir and rel_dir not in made:
        made.add(rel_dir)
        rel_dir = rel_dir.rpartition("/")[0]


def _swap_into_place(staging: Path, out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ApiTreeError(
            f"--out {out_dir} exists and is not a directory", fix="pass a directory path"
        )
    retired: Path | None = None
    if out_dir.exists():
        retired = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        try:
            os.replace(out_dir, retired / out_dir.name)
        except OSError as exc:
            os.rmdir(retired)
            raise ApiTreeError(
                f"cannot replace {out_dir}: {exc.strerror}", fix="check permissions on it"
            ) from None
    try:
        os.replace(staging, out_dir)
    except OSError as exc:
        if retired is not None:  # put the previous tree back
            os.replace(retired / out_dir.name, out_dir)
            os.rmdir(retired)
        raise ApiTreeError(f"cannot move the new tree into {out_dir}: {exc.strerror}") from None
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
