"""Input files of line-oriented commands: a path, or '-' for standard input."""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Iterable

from servekit.errors import ServekitError


def open_input(path: str, what: str) -> BinaryIO:
    """The file (or stdin for '-') as bytes, so that each line is decoded, and reported, on its own."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise ServekitError(f"cannot read {what} {path}: {exc.strerror}",
                            fix=f"pass a readable JSONL file (or '-' for standard input) as the {what}") from None


def write_json_lines(results: Iterable[Any], path: str, what: str, **dumps: Any) -> int:
    """Write one JSON line per result as it comes; an input with no lines at all is an error."""
    count = 0
    for result in results:
        sys.stdout.write(json.dumps(result, **dumps) + "\n")
        count += 1
    if not count:
        where = "standard input" if path == "-" else path
        raise ServekitError(f"the {what} is empty: {where}", fix="write one JSON object per line")
    return count
