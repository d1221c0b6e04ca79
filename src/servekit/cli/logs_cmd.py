"""``servekit logs RUN [--process ROLE] [--follow]``: the output of a run's processes.

With several processes (engine servers, router, companions) each log is printed under a
``==> ROLE (PATH) <==`` header; ``--follow`` prefixes each new line with ``[ROLE]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from servekit.errors import ServekitError


def _follow(logs: list[tuple[str, Path]], pids: list[int], offsets: dict[Path, int], prefixed: bool) -> None:
    from servekit.processes import exited

    pending: dict[Path, str] = {}
    try:
        while True:
            for role, path in logs:
                with path.open("rb") as fh:
                    fh.seek(offsets.get(path, 0))
                    chunk = fh.read()
                offsets[path] = offsets.get(path, 0) + len(chunk)
                text = chunk.decode("utf-8", errors="replace")
                if prefixed:
                    lines = (pending.pop(path, "") + text).split("\n")
                    pending[path] = lines.pop()
                    text = "".join(f"[{role}] {line}\n" for line in lines)
                sys.stdout.write(text)
            sys.stdout.flush()
            if all(exited(pid) is not None for pid in pids):
                return
            time.sleep(0.5)
    except KeyboardInterrupt:
        return


def logs_command(run: str, follow: bool, tail: int | None, process: str | None = None) -> int:
    from servekit.launch.records import load

    record = load(run)
    chosen = [p for p in record.processes if process is None or p.role == process]
    if not chosen:
        roles = ", ".join(p.role for p in record.processes) or "none"
        raise ServekitError(f"run {record.run} has no process {process!r}", fix=f"one of: {roles}")
    logs = [(p.role, Path(p.log)) for p in chosen if Path(p.log).is_file()]
    several = len(record.processes) > 1
    offsets: dict[Path, int] = {}
    for role, path in logs:
        data = path.read_bytes()
        offsets[path] = len(data)
        text = data.decode("utf-8", errors="replace")
        if tail is not None:
            text = "\n".join(text.splitlines()[-tail:]) + "\n"
        if several:
            sys.stdout.write(f"==> {role} ({path}) <==\n")
        sys.stdout.write(text)
    if follow:
        _follow(logs, [p.pid for p in chosen if p.pid], offsets, several and len(chosen) > 1)
    return 0


def register(app: typer.Typer) -> None:
    @app.command("logs")
    def _logs(
        run: str = typer.Argument(..., help="Run id (servekit ps)."),
        follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing until the run ends."),
        tail: int = typer.Option(None, "--tail", help="Only the last N lines."),
        process: str = typer.Option(None, "--process", help="Only this process's log (a role: prefill, router ...)."),
    ) -> None:
        """Print a run's server output (every process's, or one's)."""
        logs_command(run, follow, tail, process)
