"""Stopping a run's process group: SIGINT first, SIGKILL for what ignores it, nothing left behind."""

from __future__ import annotations

import signal
import sys
import time

import psutil

from servekit.launch.spawn import start_process
from servekit.processes import alive, stop_processes

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
