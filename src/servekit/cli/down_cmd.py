"""``servekit down RUN``: stop every process of a run (SIGINT, SIGTERM, SIGKILL), leave none behind."""

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
                               "left": list(result.left)}))
    elif result.clean:
        sent = ", ".join(result.signals) or "nothing (no process was alive)"
        typer.echo(f"run {record.run} stopped (sent {sent})")
    if not result.clean:
        print(f"error: run {record.run}: processes still alive after SIGKILL: {list(result.left)}", file=sys.stderr)
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
