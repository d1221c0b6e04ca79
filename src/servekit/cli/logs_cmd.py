"""``servekit logs RUN [--follow]``: the output of a run's processes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer


def _follow(paths: list[Path], pids: list[int], offsets: dict[Path, int]) -> None:
    from servekit.launch.readiness import exited

    try:
        while True:
            for path in paths:
                with path.open("rb") as fh:
                    fh.seek(offsets.get(path, 0))
                    chunk = fh.read()
                offsets[path] = offsets.get(path, 0) + len(chunk)
                sys.stdout.write(chunk.decode("utf-8", errors="replace"))
            sys.stdout.flush()
            if all(exited(pid) is not None for pid in pids):
                return
            time.sleep(0.5)
    except KeyboardInterrupt:
        return


def logs_command(run: str, follow: bool, tail: int | None) -> int:
    from servekit.launch.records import load

    record = load(run)
    paths = [Path(p.log) for p in record.processes if Path(p.log).is_file()]
    offsets: dict[Path, int] = {}
    for path in paths:
        data = path.read_bytes()
        offsets[path] = len(data)
        text = data.decode("utf-8", errors="replace")
        if tail is not None:
            text = "\n".join(text.splitlines()[-tail:]) + "\n"
        sys.stdout.write(text)
    if follow:
        _follow(paths, record.pids, offsets)
    return 0


def register(app: typer.Typer) -> None:
    @app.command("logs")
    def _logs(
        run: str = typer.Argument(..., help="Run id (servekit ps)."),
        follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing until the run ends."),
        tail: int = typer.Option(None, "--tail", help="Only the last N lines."),
    ) -> None:
        """Print a run's server output."""
        logs_command(run, follow, tail)
