"""Stopping a run: SIGINT to its process group, then SIGTERM, then SIGKILL, each after a timeout.

Every process of the group (and every descendant of the run's processes that left it) is
found with psutil before the first signal, so nothing is left behind; ``alive`` checks after.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import psutil

STEPS = ((signal.SIGINT, 20.0), (signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0))


@dataclass(frozen=True)
class StopResult:
    signals: tuple[str, ...]
    left: tuple[int, ...]
    problems: tuple[str, ...] = ()
    """What else could not be stopped (a container ``docker stop`` failed on)."""

    @property
    def clean(self) -> bool:
        return not self.left and not self.problems


def members(pids: Iterable[int], groups: Iterable[int]) -> list[psutil.Process]:
    """Live processes of the run: the given pids, their descendants, and everything in ``groups``."""
    wanted = set(groups)
    found: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            found[pid] = proc
            found.update({c.pid: c for c in proc.children(recursive=True)})
        except psutil.Error:
            continue
    for proc in psutil.process_iter():
        try:
            if proc.pid not in found and os.getpgid(proc.pid) in wanted:
                found[proc.pid] = proc
        except (OSError, psutil.Error):
            continue
    return [p for p in found.values() if _running(p)]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _reap(procs: Sequence[psutil.Process]) -> None:
    """Collect exit codes of our own children so they do not linger as zombies."""
    for proc in procs:
        try:
            os.waitpid(proc.pid, os.WNOHANG)
        except (ChildProcessError, OSError):
            continue


def _signal(procs: Sequence[psutil.Process], groups: Sequence[int], sig: signal.Signals) -> None:
    for group in groups:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass
    for proc in procs:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            continue


def stop_run(pids: Sequence[int], groups: Sequence[int], steps=STEPS) -> StopResult:
    """Stop every process of a run; returns which signals were sent and the pids still alive."""
    procs = members(pids, groups)
    sent: list[str] = []
    for sig, timeout in steps:
        alive = [p for p in procs if _running(p)]
        if not alive:
            break
        _signal(alive, groups, sig)
        sent.append(sig.name)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _reap(alive)
            if not any(_running(p) for p in alive):
                break
            time.sleep(0.2)
    _reap(procs)
    left = tuple(p.pid for p in members(pids, groups))
    return StopResult(tuple(sent), left)


def alive(pids: Sequence[int], groups: Sequence[int]) -> list[int]:
    return [p.pid for p in members(pids, groups)]
