"""JSON Lines input: one request object per line, numbered from 1, blank lines skipped.

Every line-oriented command (``plan --batch``, ``fit --points``) reads its input the same way
and reports a bad line as that line's error, never by stopping the run.
"""

from __future__ import annotations

import json
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
