"""Input files of line-oriented commands: a path, or '-' for standard input."""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Iterable

from servekit.errors import ServekitError
from servekit.records import record


_UTF8_BOM = b"\xef\xbb\xbf"


def _sniffed(handle: BinaryIO, path: str, what: str) -> BinaryIO:
    """The same stream, past a UTF-8 byte-order mark; UTF-16 or UTF-32 text is refused as a whole,
    since every line of it would fail on its own. Other bad bytes are the error of their line."""
    peek = getattr(handle, "peek", None)
    head = peek(64)[:64] if peek is not None else b""
    if b"\x00" in head:  # UTF-16/32 text of any JSON holds NUL bytes; other bad bytes are their line's error
        where = "standard input" if path == "-" else path
        handle.close() if path != "-" else None
        raise ServekitError(f"the {what} {where} is UTF-16 (or UTF-32) text; servekit reads UTF-8 JSON Lines",
                            fix=f"convert it first, e.g. iconv -f UTF-16 -t UTF-8 {where} > converted.jsonl")
    if head.startswith(_UTF8_BOM):
        handle.read(len(_UTF8_BOM))
    return handle


def open_input(path: str, what: str) -> BinaryIO:
    """The file (or stdin for '-') as bytes, so that each line is decoded, and reported, on its own.

    Every line-oriented command reads through here: a UTF-8 byte-order mark is skipped, UTF-16
    input is one error for the whole input, a line that is not UTF-8 is that line's error."""
    if path == "-":
        return _sniffed(sys.stdin.buffer, path, what)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise ServekitError(f"cannot read {what} {path}: {exc.strerror}",
                            fix=f"pass a readable JSONL file (or '-' for standard input) as the {what}") from None
    return _sniffed(handle, path, what)


@record
class Written:
    """How many result lines were written, and how many of them are errors."""

    count: int
    failed: int

    @property
    def exit_code(self) -> int:
        """1 when every line failed (nothing useful came out), else 0."""
        return 1 if self.count and self.failed == self.count else 0

    def __int__(self) -> int:
        return self.count


def _failed(result: Any) -> bool:
    return isinstance(result, dict) and "error" in result


def write_json_lines(results: Iterable[Any], path: str, what: str, **dumps: Any) -> Written:
    """Write one JSON line per result as it comes; an input with no lines at all is an error.

    When every line failed, a one-line summary goes to stderr (the exit code is ``exit_code``)."""
    count = failed = 0
    for result in results:
        sys.stdout.write(json.dumps(result, **dumps) + "\n")
        count += 1
        failed += _failed(result)
    where = "standard input" if path == "-" else path
    if not count:
        raise ServekitError(f"the {what} is empty: {where}", fix="write one JSON object per line")
    if failed == count:
        sys.stderr.write(f"error: every line of the {what} failed ({count} line(s) in {where}; "
                         f"each line's error is in its output line)\n")
    return Written(count, failed)
