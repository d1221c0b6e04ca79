"""Helpers for the engine-marked launch tests: the engine environments, and one ``up --detach``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.engines.registry import get_engine
from servekit.processes import alive, port_free
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
    return port_free(host, int(port))


def none_alive(pids: list[int]) -> bool:
    """No process of the run lives: the pids, their descendants, the groups they lead."""
    return alive(pids, pids) == []
