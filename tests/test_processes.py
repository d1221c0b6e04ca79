"""Stopping a run's process group: SIGINT first, SIGKILL for what ignores it, nothing left behind."""

from __future__ import annotations

import signal
import sys
import time

import psutil

from servekit.launch.spawn import start_process
from servekit import processes
from servekit.processes import (LOWEST_PICKED_PORT, alive, ephemeral_range, free_port, listener, port_free,
                                 port_picker, stop_processes)

# a parent that starts a child, both ignoring SIGINT and SIGTERM when asked to
STUBBORN = """
import signal, subprocess, sys, time
if sys.argv[1] == "stubborn":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import signal, time; "
    + ("signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN); "
       if sys.argv[1] == "stubborn" else "") + "time.sleep(600)"])
print("child", child.pid, flush=True)
time.sleep(600)
"""


def _start(tmp_path, mode: str) -> tuple[int, list[int]]:
    log = tmp_path / f"{mode}.log"
    pid = start_process([sys.executable, "-c", STUBBORN, mode], {}, log)
    deadline = time.monotonic() + 60
    while "child" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    return pid, [pid, int(log.read_text().split()[1])]


def test_the_run_leads_its_own_process_group(tmp_path):
    pid, pids = _start(tmp_path, "polite")
    try:
        assert psutil.Process(pid).pid == pid
        import os
        assert os.getpgid(pid) == pid and os.getpgid(pids[1]) == pid
    finally:
        stop_processes([pid], [pid])


def test_sigint_stops_a_polite_group_and_nothing_is_left(tmp_path):
    pid, pids = _start(tmp_path, "polite")
    result = stop_processes([pid], [pid])
    assert result.clean and result.signals == ("SIGINT",)
    assert alive(pids, [pid]) == []
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)


def test_sigkill_ends_a_group_that_ignores_sigint_and_sigterm(tmp_path):
    pid, pids = _start(tmp_path, "stubborn")
    steps = ((signal.SIGINT, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0))
    result = stop_processes([pid], [pid], steps)
    assert result.signals == ("SIGINT", "SIGTERM", "SIGKILL")
    assert result.clean
    assert alive(pids, [pid]) == []


def test_stopping_a_run_that_already_ended_sends_nothing(tmp_path):
    pid, _ = _start(tmp_path, "polite")
    stop_processes([pid], [pid])
    again = stop_processes([pid], [pid])
    assert again.clean and again.signals == ()


def test_a_picked_port_lies_outside_the_kernels_ephemeral_range_and_is_free():
    low, high = ephemeral_range()
    for _ in range(20):
        port = free_port()
        assert not low <= port <= high and port >= LOWEST_PICKED_PORT
        assert port_free("127.0.0.1", port)


def test_a_port_something_is_bound_to_is_never_picked(monkeypatch):
    held = listener("127.0.0.1", free_port())
    try:
        port = held.getsockname()[1]
        monkeypatch.setattr(processes, "LOWEST_PICKED_PORT", port)
        monkeypatch.setattr(processes, "ephemeral_range", lambda: (port + 2, 65535))
        # one candidate is held, the other is free: the free one comes back every time
        assert {processes.free_port() for _ in range(10)} == {port + 1}
    finally:
        held.close()


def _free_block(size: int) -> int:
    """The first port from which ``size`` ports in a row are free here."""
    return next(base for base in range(20000, 30000) if all(port_free("127.0.0.1", base + i) for i in range(size)))


def test_one_runs_picker_never_hands_out_a_port_twice(monkeypatch):
    base = _free_block(4)
    monkeypatch.setattr(processes, "LOWEST_PICKED_PORT", base)
    monkeypatch.setattr(processes, "ephemeral_range", lambda: (base + 4, 65535))
    pick = port_picker(given=[base])
    assert sorted(pick() for _ in range(3)) == [base + 1, base + 2, base + 3]
    # the four ports outside the range are spent: the kernel's choice, still not one handed out
    assert pick() not in range(base, base + 4)
