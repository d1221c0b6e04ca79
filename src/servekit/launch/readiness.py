"""Waiting for a run to serve: its readiness path answers 200, while its log shows the phases.

The wait ends when the health endpoint answers (ready), a process of the run exits (failed), or
the timeout passes (failed). Every phase seen is reported once, with seconds since the start.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from servekit.launch.phases import READY, PhaseMatcher
from servekit.launch.spawn import exit_code

PhaseCallback = Callable[[str, float], None]


@dataclass(frozen=True)
class Readiness:
    ok: bool
    seconds: float
    phases: dict[str, float] = field(default_factory=dict)
    reason: str | None = None


def healthy(url: str, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - a URL the run serves
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def exited(pid: int) -> int | None:
    """The exit code of a run's process once it has ended (-1 when it is not our child)."""
    code = exit_code(pid)
    if code is not None:
        return code
    try:
        proc = psutil.Process(pid)
        return -1 if proc.status() == psutil.STATUS_ZOMBIE else None
    except psutil.NoSuchProcess:
        return -1
    except psutil.Error:
        return None


class LogWatcher:
    """Reads what a set of log files gained since the last look."""

    def __init__(self, logs: Sequence[Path]) -> None:
        self.logs = list(logs)
        self.text = ""
        self._offsets = {log: 0 for log in self.logs}

    def poll(self) -> str:
        for log in self.logs:
            try:
                with log.open("rb") as fh:
                    fh.seek(self._offsets[log])
                    chunk = fh.read()
            except OSError:
                continue
            self._offsets[log] += len(chunk)
            self.text += chunk.decode("utf-8", errors="replace")
        return self.text


def wait_ready(health_url: str, pids: Sequence[int], logs: Sequence[Path], phases: PhaseMatcher,
               timeout: float, on_phase: PhaseCallback | None = None, interval: float = 0.5) -> Readiness:
    started = time.monotonic()
    watcher = LogWatcher(logs)
    seen: dict[str, float] = {}

    def note(name: str) -> None:
        if name not in seen:
            seen[name] = round(time.monotonic() - started, 2)
            if on_phase:
                on_phase(name, seen[name])

    while time.monotonic() - started < timeout:
        for name in phases.seen(watcher.poll()):
            note(name)
        if healthy(health_url):
            note(READY)
            return Readiness(True, round(time.monotonic() - started, 2), seen)
        gone = [(pid, code) for pid in pids if (code := exited(pid)) is not None]
        if gone:
            pid, code = gone[0]
            why = f"process {pid} exited" + (f" with code {code}" if code != -1 else "") + " before it was ready"
            return Readiness(False, round(time.monotonic() - started, 2), seen, why)
        time.sleep(interval)
    return Readiness(False, round(time.monotonic() - started, 2), seen,
                     f"no answer from {health_url} within {timeout:.0f} s")
