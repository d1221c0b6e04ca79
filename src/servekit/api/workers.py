"""Run independent parts of a build in forked worker processes.

Rendering and writing the tree is CPU-bound pure Python, so the build splits the recipes into
parts and forks one process per extra part (the parent runs the first part itself). A child
inherits the loaded vocabulary and code for free, parses its own recipes, writes its files
into the staging directory all parts share, and sends back only a small picklable result.
Off Linux (no ``fork``, or a fork that system libraries do not tolerate), or for a single
part, everything runs in this process.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TypeVar

from servekit.errors import ServekitError

T = TypeVar("T")
R = TypeVar("R")


class WorkerError(ServekitError):
    """A worker process failed; carries its message (and traceback for bugs)."""


def can_fork() -> bool:
    """Forking a loaded interpreter is safe and cheap on Linux; elsewhere run in-process."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def default_jobs() -> int:
    """One worker per available CPU, at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus))


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _child(func: Callable[[T], R], item: T, fd: int) -> None:
    try:
        payload = pickle.dumps(("ok", func(item)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which re-raises
        expected = isinstance(exc, ServekitError)
        detail = str(exc) if expected else "".join(traceback.format_exception(exc))
        payload = pickle.dumps(("error", expected, type(exc).__name__, detail))
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def fork_map(func: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[func(i) for i in items]``, the items after the first each in a forked child."""
    if len(items) <= 1 or not can_fork():
        return [func(item) for item in items]
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, int]] = []
    try:
        for item in items[1:]:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # child: never returns into the caller's stack
                code = 0
                try:
                    os.close(read_fd)
                    _child(func, item, write_fd)
                except BaseException:  # noqa: BLE001
                    code = 1
                finally:
                    os._exit(code)
            os.close(write_fd)
            children.append((pid, read_fd))
        results = [func(items[0])]
    except BaseException:
        for pid, read_fd in children:
            os.close(read_fd)
            os.waitpid(pid, 0)
        raise
    failures: list[str] = []
    bugs: list[str] = []
    for pid, read_fd in children:
        data = _read_all(read_fd)
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
        if not data:
            failures.append(f"worker {pid} exited with status {status} and no result")
            continue
        outcome = pickle.loads(data)
        if outcome[0] == "ok":
            results.append(outcome[1])
        else:
            _, expected, name, detail = outcome
            (failures if expected else bugs).append(detail)
    if bugs:
        raise RuntimeError("a build worker failed:\n" + "\n".join(bugs))
    if failures:
        raise WorkerError("; ".join(failures))
    return results
