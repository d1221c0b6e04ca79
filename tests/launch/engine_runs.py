"""Helpers for the engine-marked launch tests: the engine environments, and one ``up --detach``."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import psutil
import pytest

from servekit.cli.app import main
from servekit.engines.registry import get_engine
from testing.engines import engine_python


def use_engine(engine_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point servekit at the installed environment of ``engine_id`` (skip when it is not installed)."""
    python = engine_python(get_engine(engine_id).install.requirement)
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(Path(python).parents[3]))


def up_detached(capsys, *args: str) -> dict:
    code = main(["up", *args, "--detach", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-4000:]
    return json.loads(captured.out.strip().splitlines()[-1])


def verify_json(capsys, run: str) -> tuple[int, dict, str]:
    code = main(["verify", run, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def port_is_free(url: str) -> bool:
    host, port = url.rsplit("/", 1)[-1].split(":")
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no owner
        try:
            sock.bind((host, int(port)))
        except OSError:
            return False
    return True


def none_alive(pids: list[int]) -> bool:
    def running(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    group_members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) in pids:
                group_members.append(proc.pid)
        except (OSError, psutil.Error):
            continue
    return not any(running(p) for p in pids) and not any(running(p) for p in group_members)
