"""JSON Lines: one object per line, numbered from 1, blank lines skipped. Every reader of JSON
Lines uses this module.

Every line-oriented command (``plan --batch``, ``fit --points``, ``lint --batch``) reads its
input with ``numbered_objects`` and reports a bad line as that line's error, never by stopping
the run. Data that must be whole (a reference file, a program's output) is read with
``objects`` or ``read_objects``, where a bad line is an error naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator


def numbered_objects(lines: Iterable[str | bytes]) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(line number, object, None)`` per good line, ``(line number, None, "line N: why")`` per bad one."""
    for number, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                yield number, None, f"line {number}: not UTF-8 text"
                continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, None, f"line {number}: not JSON ({exc.msg})"
            continue
        if not isinstance(value, dict):
            yield number, None, f"line {number}: each line must be a JSON object"
            continue
        yield number, value, None


def objects(lines: Iterable[str | bytes], where: str = "JSON Lines") -> list[dict[str, Any]]:
    """Every object of ``lines``; a bad line raises ``ValueError`` naming ``where`` and the line."""
    out = []
    for _number, value, error in numbered_objects(lines):
        if value is None:
            raise ValueError(f"{where}: {error}")
        out.append(value)
    return out


def read_objects(path: Path) -> list[dict[str, Any]]:
    """Every object of the JSON Lines file ``path`` (``.xz``: read through lzma)."""
    path = Path(path)
    if path.suffix == ".xz":
        import lzma

        with lzma.open(path, "rt", encoding="utf-8") as fh:
            return objects(fh, str(path))
    with path.open("r", encoding="utf-8") as fh:
        return objects(fh, str(path))
