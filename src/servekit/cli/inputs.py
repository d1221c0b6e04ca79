"""Input files of line-oriented commands: a path, or '-' for standard input."""

from __future__ import annotations

import sys
from typing import BinaryIO

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
