"""``servekit down RUN``: stop every process of a run, each whole process group (SIGINT, SIGTERM,
SIGKILL), and its containers (``docker stop``, ``docker rm``); leave none behind."""

from __future__ import annotations

import json
import sys

import typer


def down_command(run: str, output_format: str) -> int:
    from servekit.launch.records import load
    from servekit.launch.up import stop_recorded

    record, result = stop_recorded(load(run))
    if output_format == "json":
        typer.echo(json.dumps({"run": record.run, "stopped": result.clean, "signals": list(result.signals),
                               "left": list(result.left), "problems": list(result.problems),
                               "processes": [p.role for p in record.processes]}))
    elif result.clean:
        sent = ", ".join(result.signals) or "nothing (no process was alive)"
        roles = ", ".join(p.role for p in record.processes) or "no processes"
        typer.echo(f"run {record.run} stopped: {roles} (sent {sent})")
    if result.left:
        print(f"error: run {record.run}: processes still alive after SIGKILL: {list(result.left)}", file=sys.stderr)
    for problem in result.problems:
        print(f"error: run {record.run}: {problem}", file=sys.stderr)
    if not result.clean:
        return 1
    return 0


def register(app: typer.Typer) -> None:
    @app.command("down")
    def _down(
        run: str = typer.Argument(..., help="Run id (servekit ps)."),
        output_format: str = typer.Option("text", "--format", help="text or json"),
    ) -> None:
        """Stop a run started by `servekit up`."""
        code = down_command(run, output_format)
        if code:
            raise SystemExit(code)
