"""Writing a file so that a reader sees the old content or the new, never a part: a temp file
beside the target, flushed to disk, then renamed over it (``os.replace`` is atomic on POSIX).
A failure at any point removes the temp file and leaves the target as it was."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically, creating the parent folder when needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, doc: Any, *, compact: bool = False) -> None:
    """``doc`` as JSON at ``path`` atomically: indented with sorted keys and a final newline, or
    ``compact`` (no spaces, key order kept) for large machine-read files."""
    if compact:
        text = json.dumps(doc, separators=(",", ":"))
    else:
        text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))
