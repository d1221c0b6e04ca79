"""``wiring.Programs`` that start ``standin_server.py`` in place of the engine, the router and
the companions, for the fast several-process tests (see standin_server.py for why)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from launch import standin_server
from servekit.launch.launch_plan import LaunchProcess
from servekit.launch.phases import PhaseMatcher, matcher


class StandInPrograms:
    """``extra[role]``: more options for that role's stand-in (``--exit-code 3``, ``--ready-after 1``)."""

    def __init__(self, folder: Path, extra: Mapping[str, Sequence[str]] | None = None) -> None:
        self.folder = folder
        self.extra = {k: list(v) for k, v in (extra or {}).items()}

    def _words(self, role: str) -> list[str]:
        return [sys.executable, standin_server.PATH, "--role", role, *self.extra.get(role, [])]

    def engine_command(self, process: LaunchProcess, host: str, port: int) -> tuple[str, ...]:
        return (*self._words(process.role), "--host", host, "--port", str(port))

    def engine_env(self, env: Mapping[str, str], host: str) -> dict[str, str]:
        return dict(env)

    def program(self, word: str) -> str:
        path = self.folder / "bin" / word
        path.parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"'{w}'" for w in self._words(word))
        path.write_text(f'#!/bin/sh\nexec {words} "$@"\n', encoding="utf-8")
        path.chmod(0o755)
        return str(path)

    def engine_check(self, url: str) -> str:
        return url + "/health"

    def engine_phases(self) -> PhaseMatcher:
        return matcher({})
