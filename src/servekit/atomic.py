"""Every write of a file servekit makes goes through this module (a code-shape test holds every
other module to it).

- Whole files (records, manifests, a user's recipe, metadata): a temp file beside the target,
  flushed to disk, then renamed over it (``os.replace`` is atomic on POSIX): a reader sees the
  old content or the new, never a part. A failure at any point removes the temp file and
  leaves the target as it was. A file that existed keeps its permission bits.
- Streams (a download): written to a temp file beside the target, renamed over it when the
  stream ends well, removed when it does not.
- Files of a staging tree (the API build): a folder no reader sees until the caller swaps it in
  whole, so each file is written in place and the swap is the atomic step.
- Logs: appended to, never rewritten (a reader sees a prefix); a child process's output goes
  straight into one.
- Lock files: held with ``flock`` for as long as a block runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

DEFAULT_UMASK = 0o022
STAGED_MODE = 0o644


def _umask() -> int:
    """The process's umask (``/proc/self/status`` on Linux; reading it with ``os.umask`` would
    change it for a moment for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return DEFAULT_UMASK


def _mode_for(path: Path) -> int:
    """The permission bits of the file at ``path``, or those a new file gets."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[IO[bytes]]:
    """A binary file handle whose content replaces ``path`` atomically when the block ends well;
    the folder is created when missing, and nothing changes when the block raises."""
    path = Path(path)
    import tempfile  # stdlib, with shutil, random, bz2 and lzma behind it: only a write needs it

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fchmod(fh.fileno(), _mode_for(path))
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically, creating the parent folder when needed."""
    with replacing(path) as fh:
        fh.write(data)


def write_text_atomic(path: Path, text: str) -> None:
    """``text`` (UTF-8) at ``path`` atomically."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, doc: Any, *, compact: bool = False) -> None:
    """``doc`` as JSON at ``path`` atomically: indented with sorted keys and a final newline, or
    ``compact`` (no spaces, key order kept) for large machine-read files."""
    if compact:
        text = json.dumps(doc, separators=(",", ":"))
    else:
        text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def write_staged(path: str, data: bytes, *, exclusive: bool = False) -> None:
    """``data`` as the file ``path`` inside a staging tree (its folder exists): written in place;
    ``exclusive`` refuses a file that is already there (``FileExistsError``)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, STAGED_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


@contextlib.contextmanager
def appending(path: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """The log at ``path`` open for appending (UTF-8 text, or ``binary`` for a child process's
    output), its folder created when missing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.open("ab") if binary else path.open("a", encoding="utf-8")) as fh:
        yield fh


def append_text(path: Path, text: str) -> None:
    """Add ``text`` at the end of the log ``path``."""
    with appending(path) as fh:
        fh.write(text)


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the lock file ``path`` (created when missing) while the
    block runs; with ``wait=False`` a lock another process holds raises ``BlockingIOError``."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
