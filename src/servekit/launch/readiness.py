"""Waiting for a run to serve: each process's readiness check passes (an HTTP path answering
200, or a port accepting connections), while its log shows the phases.

The wait ends when every process is ready, when a process of the run exits (failed, naming it),
or when the timeout passes (failed). Every phase seen is reported once, with seconds since the
start of the wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path

from servekit.launch.phases import READY, PhaseMatcher
from servekit.processes import exited, http_ok, port_open
from servekit.records import record

PhaseCallback = Callable[[str, float], None]


@record
class Readiness:
    ok: bool
    seconds: float
    phases: dict[str, float] = field(default_factory=dict)
    reason: str | None = None
    failed: str | None = None
    """The name of the watched process that failed."""


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


@record
class Watch:
    """One process waited for: its name, where it shows it is ready (an ``http://`` URL that
    answers 200, or ``tcp://HOST:PORT`` that accepts connections), its pids, logs and phases."""

    name: str
    check: str
    pids: tuple[int, ...]
    logs: tuple[Path, ...] = ()
    phases: PhaseMatcher = PhaseMatcher(())


def answers(check: str) -> bool:
    """The readiness check of a ``Watch`` passes."""
    if check.startswith("tcp://"):
        host, _, port = check[len("tcp://"):].rpartition(":")
        return port_open(host, int(port))
    return http_ok(check)


def _gone(watches: Sequence[Watch]) -> tuple[Watch, int, int] | None:
    for watch in watches:
        for pid in watch.pids:
            code = exited(pid)
            if code is not None:
                return watch, pid, code
    return None


def wait_all(watches: Sequence[Watch], timeout: float, on_phase: PhaseCallback | None = None,
             interval: float = 0.5, running: Sequence[Watch] = (), named: bool | None = None,
             since: float | None = None) -> Readiness:
    """Wait until every watched process is ready. Any of them (or of ``running``, started
    before) exiting fails the wait at once, naming it. When ``named`` (default: several watches)
    a phase is reported as ``NAME: PHASE``; seconds count from ``since`` (a ``time.monotonic``
    value; default: now)."""
    started = time.monotonic()
    origin = since if since is not None else started
    named = len(watches) > 1 if named is None else named
    watchers = {w.name: LogWatcher(w.logs) for w in watches}
    seen: dict[str, float] = {}
    ready: set[str] = set()

    def note(watch: Watch, phase: str) -> None:
        name = f"{watch.name}: {phase}" if named else phase
        if name not in seen:
            seen[name] = round(time.monotonic() - origin, 2)
            if on_phase:
                on_phase(name, seen[name])

    while time.monotonic() - started < timeout:
        for watch in watches:
            if watch.name in ready:
                continue
            for phase in watch.phases.seen(watchers[watch.name].poll()):
                note(watch, phase)
            if answers(watch.check):
                note(watch, READY)
                ready.add(watch.name)
        if len(ready) == len(watches):
            return Readiness(True, round(time.monotonic() - origin, 2), seen)
        gone = _gone([*running, *watches])
        if gone:
            watch, pid, code = gone
            why = f"{watch.name} (process {pid}) exited" + (f" with code {code}" if code != -1 else "")
            return Readiness(False, round(time.monotonic() - origin, 2), seen, why + " before it was ready",
                             watch.name)
        time.sleep(interval)
    late = [w for w in watches if w.name not in ready]
    return Readiness(False, round(time.monotonic() - origin, 2), seen,
                     f"{late[0].name}: no answer from {late[0].check} within {timeout:.0f} s", late[0].name)


def wait_ready(health_url: str, pids: Sequence[int], logs: Sequence[Path], phases: PhaseMatcher,
               timeout: float, on_phase: PhaseCallback | None = None, interval: float = 0.5) -> Readiness:
    """Wait for one server: its health URL answers, its log shows the phases."""
    return wait_all([Watch("server", health_url, tuple(pids), tuple(logs), phases)], timeout, on_phase, interval)
