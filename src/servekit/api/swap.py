"""Swap two directories in one atomic step.

On Linux, ``renameat2(RENAME_EXCHANGE)`` (kernel 3.15, glibc 2.28; ext4, xfs, btrfs, tmpfs and
overlayfs take the flag) exchanges two names at once: every lookup of either path finds one
directory or the other, never nothing, and a process killed at any moment leaves one of the two
arrangements. Where the call or the flag is missing (another system, a file system that refuses
it), the swap takes three renames through ``retired``: current -> retired, new -> current,
retired -> new. Between the first two renames ``current`` is missing for a moment; a process
killed there leaves the previous directory at ``retired``, and ``restore`` (run before the next
swap) moves it back.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 1 << 1
_NOT_SUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, getattr(errno, "EOPNOTSUPP", errno.EINVAL)})
"""What ``renameat2`` answers when the kernel lacks the call or the file system the flag."""


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no C library handle, or a glibc older than 2.28
        return None
    func.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    func.restype = ctypes.c_int
    return func


def native_exchange(new: Path, current: Path) -> bool:
    """Exchange the two paths with ``renameat2``; False when this system cannot."""
    func = _renameat2()
    if func is None:
        return False
    if func(_AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(current), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NOT_SUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(current))


def exchange(new: Path, current: Path, retired: Path) -> None:
    """Put the directory ``new`` at ``current``, and what was at ``current`` (if anything) at
    ``new``. ``retired`` is a free path on the same file system, used only without
    ``renameat2``."""
    if not os.path.lexists(current):
        os.rename(new, current)  # nothing to keep: one rename is atomic
        return
    if native_exchange(new, current):
        return
    os.rename(current, retired)
    try:
        os.rename(new, current)
    except BaseException:
        os.rename(retired, current)
        raise
    os.rename(retired, new)


def restore(current: Path, retired: Path) -> None:
    """Finish a three-rename swap that a killed process cut short: the previous directory goes
    back to ``current`` when nothing took its place, and is removed when the new one did."""
    if not os.path.lexists(retired):
        return
    if os.path.lexists(current):
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.rename(retired, current)
