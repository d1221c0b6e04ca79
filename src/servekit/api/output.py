"""The directory a build publishes (``--out``) and servekit's own state beside it.

For ``--out site`` the state lives in ``.site.servekit`` next to it::

    site/                  the published tree
    .site.servekit/
        manifest.json      what the tree holds (``servekit.api.manifest``)
        mirror/            the tree again (the previous version), each file a hard link to the
                           tree's but where the last build changed it: where the next version
                           is prepared, by a full build as by an incremental one
                           (``servekit.api.mirror``)
        stage-*/           a tree being written whole (``JsonTree.publish``)
        *.tmp              a manifest being written
        retired/           the previous tree during a swap made of renames (``servekit.api.swap``)

Builds of one ``--out`` take turns: ``locked`` holds an exclusive ``flock`` on the state
directory for the whole build. On entry it clears what a killed build left behind: it puts back
a tree a cut-short swap had moved aside and removes unfinished stages and temporary files. On exit it removes the
state directory when it holds nothing. The state directory may be deleted between builds; the
next build is then a full one.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from servekit.api.swap import restore
from servekit.api.tree import ApiTreeError
from servekit.records import record

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: builds of one --out must not overlap
    fcntl = None  # type: ignore[assignment]

STAGE_PREFIX = "stage-"
TEMP_SUFFIX = ".tmp"


@record
class Output:
    """``--out`` and the paths of its build state."""

    path: Path

    @property
    def state(self) -> Path:
        return state_dir(self.path)

    @property
    def manifest(self) -> Path:
        return self.state / "manifest.json"

    @property
    def mirror(self) -> Path:
        return self.state / "mirror"

    @property
    def retired(self) -> Path:
        return self.state / "retired"


def state_dir(out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    return out_dir.parent / f".{out_dir.name}.servekit"


def identity(path: Path) -> str:
    """``device:inode`` of a directory (it moves with the directory in a swap); "" when absent."""
    try:
        info = os.stat(path)
    except OSError:
        return ""
    return f"{info.st_dev}:{info.st_ino}"


@contextmanager
def locked(out_dir: Path) -> Iterator[Output]:
    """Hold the build lock of ``out_dir`` (another build of it waits) with its state tidied."""
    output = Output(Path(out_dir))
    fd = _lock(output.state)
    try:
        try:
            restore(output.path, output.retired)
            _remove_leftovers(output.state)
            (output.path.parent / f".{output.path.name}.servekit-build.json").unlink(missing_ok=True)
        except OSError as exc:
            raise _error(exc, output.state) from None
        yield output
    finally:
        try:
            if not os.listdir(output.state):
                os.rmdir(output.state)
        except OSError:
            pass
        os.close(fd)


def _lock(state: Path) -> int:
    """An open descriptor of ``state`` with an exclusive lock on it. A build that removed the
    directory while this one waited leaves a lock on a deleted directory: then try again."""
    while True:
        try:
            state.mkdir(parents=True, exist_ok=True)
            fd = os.open(state, os.O_RDONLY)
        except OSError as exc:
            raise _error(exc, state) from None
        if fcntl is None:
            return fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(state))
        except OSError:
            same = False
        if same:
            return fd
        os.close(fd)


def _remove_leftovers(state: Path) -> None:
    """Stages and temporary files a killed build left (under the lock, no other build is
    writing one)."""
    for name in os.listdir(state):
        if name.startswith(STAGE_PREFIX):
            shutil.rmtree(state / name, ignore_errors=True)
        elif name.endswith(TEMP_SUFFIX):
            (state / name).unlink(missing_ok=True)


def _error(exc: OSError, where: Path) -> ApiTreeError:
    return ApiTreeError(f"cannot use {exc.filename or where}: {exc.strerror}",
                        fix="choose an --out directory whose parent is writable")
