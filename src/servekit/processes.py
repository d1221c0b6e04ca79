"""The processes servekit starts, and the ports they serve on: one home for every check and stop.

- ports: a free one, whether one is free to bind, a bound listening socket, whether one answers;
- health: whether an HTTP path answers 200, waiting until it does while the process lives,
  whether a process has exited (and its exit code when it is our child);
- stopping: every process of a run (the given pids, their descendants, everything in the given
  process groups), SIGINT first, then SIGTERM, then SIGKILL, each after a timeout; found with
  psutil before the first signal so nothing is left behind.

``up``/``down`` (``servekit.launch``), the warm-cache boot step (``servekit.warm``), the web
server and the tests all use these; none keeps a copy.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import psutil

from servekit.records import record

STOP_STEPS = ((signal.SIGINT, 20.0), (signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0))
"""Signal and the seconds given to it, in order, when a run is stopped."""


# ── ports ───────────────────────────────────────────────────────────────────────────────


EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LINUX_EPHEMERAL_RANGE = (32768, 60999)
"""The kernel's default range for ports it hands out itself (``bind`` to port 0, the local end of
an outgoing connection), used where the file above cannot be read."""
LOWEST_PICKED_PORT = 10000
"""Stated assumption: ports below this are the fixed defaults of too many services to hand out."""
PICK_TRIES = 64


def ephemeral_range() -> tuple[int, int]:
    """The range the kernel hands ports out of on its own, from ``ip_local_port_range``."""
    try:
        low, high = (int(word) for word in EPHEMERAL_RANGE_FILE.read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return LINUX_EPHEMERAL_RANGE
    return low, high


def free_port(host: str = "127.0.0.1", avoid: Iterable[int] = ()) -> int:
    """A port nothing is bound to now, outside the kernel's ephemeral range and not in ``avoid``.

    A run's ports are chosen before its servers start, minutes before a router binds; a port from
    the ephemeral range could meanwhile go to any process that asks the kernel for one (an engine's
    internal sockets, the local end of a health check). Ports outside it go only to whoever names
    them. The system's choice is the fallback when no port outside the range is free."""
    low, high = ephemeral_range()
    taken = set(avoid)
    candidates = [*range(LOWEST_PICKED_PORT, min(low, 65536)), *range(max(high + 1, LOWEST_PICKED_PORT), 65536)]
    chooser = random.SystemRandom()
    for port in chooser.sample(candidates, min(PICK_TRIES, len(candidates))):
        if port not in taken and _bindable(host, port):
            return port
    while True:
        with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = sock.getsockname()[1]
        if port not in taken:
            return port


def port_picker(host: str = "127.0.0.1", given: Iterable[int] = ()) -> Callable[[], int]:
    """Free ports for one run, never the same one twice (nothing binds them until the run starts)."""
    handed = set(given)

    def pick() -> int:
        port = free_port(host, avoid=handed)
        handed.add(port)
        return port

    return pick


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _bindable(host: str, port: int) -> bool:
    """Nothing holds the port, connections left in TIME_WAIT included (no ``SO_REUSEADDR``)."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def listener(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, as servers bind (``SO_REUSEADDR``: a
    connection left in TIME_WAIT is no owner); ``OSError`` when the port is taken or the host
    is not an address of this machine."""
    sock = socket.socket(_family(host), socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def port_free(host: str, port: int) -> bool:
    """No socket is bound to the port (connections left in TIME_WAIT do not count, as for servers)."""
    try:
        listener(host, port).close()
    except OSError:
        return False
    return True


def port_open(host: str, port: int, timeout: float = 2.0) -> bool:
    """Something accepts connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# ── health ──────────────────────────────────────────────────────────────────────────────


def http_ok(url: str, timeout: float = 3.0) -> bool:
    """``url`` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - a URL servekit serves
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def wait_http_ok(url: str, exit_code_of: Callable[[], int | None], timeout: float,
                 interval: float = 1.0) -> str | None:
    """None once ``url`` answers 200; else why not: the process exited (``exit_code_of`` returns
    its code) or the timeout passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = exit_code_of()
        if code is not None:
            return f"the server exited with code {code} before it was healthy"
        if http_ok(url, timeout=5.0):
            return None
        time.sleep(interval)
    return f"no healthy answer from {url} within {timeout:.0f} s"


def exit_code(pid: int) -> int | None:
    """Reap ``pid`` when it is our exited child; its exit code, or None while it runs (or is not ours)."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    return os.waitstatus_to_exitcode(status) if done else None


def exited(pid: int) -> int | None:
    """The exit code of a process once it has ended (-1 when it is not our child); None while it runs."""
    code = exit_code(pid)
    if code is not None:
        return code
    try:
        if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            return None
    except psutil.NoSuchProcess:
        return -1
    except psutil.Error:
        return None
    code = exit_code(pid)  # it ended between the two looks: our child is reaped now, with its code
    return code if code is not None else -1


# ── stopping ────────────────────────────────────────────────────────────────────────────


@record
class StopResult:
    signals: tuple[str, ...]
    left: tuple[int, ...]
    problems: tuple[str, ...] = ()
    """What else could not be stopped (a container ``docker stop`` failed on)."""

    @property
    def clean(self) -> bool:
        return not self.left and not self.problems


def members(pids: Iterable[int], groups: Iterable[int]) -> list[psutil.Process]:
    """Live processes: the given pids, their descendants, and everything in ``groups``."""
    wanted = set(groups)
    found: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            found[pid] = proc
            found.update({c.pid: c for c in proc.children(recursive=True)})
        except psutil.Error:
            continue
    if wanted:
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


def stop_processes(pids: Sequence[int], groups: Sequence[int], steps=STOP_STEPS) -> StopResult:
    """Stop every process of a run; which signals were sent and the pids still alive."""
    procs = members(pids, groups)
    sent: list[str] = []
    for sig, timeout in steps:
        alive_now = [p for p in procs if _running(p)]
        if not alive_now:
            break
        _signal(alive_now, groups, sig)
        sent.append(sig.name)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _reap(alive_now)
            if not any(_running(p) for p in alive_now):
                break
            time.sleep(0.2)
    _reap(procs)
    left = tuple(p.pid for p in members(pids, groups))
    return StopResult(tuple(sent), left)


def stop_group(pid: int, grace: float) -> StopResult:
    """Stop the process group ``pid`` leads: SIGINT for ``grace`` seconds, SIGTERM for half as
    long, then SIGKILL."""
    steps = ((signal.SIGINT, grace), (signal.SIGTERM, grace / 2), (signal.SIGKILL, 10.0))
    return stop_processes([pid], [pid], steps)


def alive(pids: Sequence[int], groups: Sequence[int]) -> list[int]:
    return [p.pid for p in members(pids, groups)]
