"""``servekit ps``: the runs recorded under servekit's home, whether their processes live, where they serve."""

from __future__ import annotations

import json
import time

import typer


def _row(record) -> dict:
    from servekit.launch.stop import alive

    live = alive(record.pids, [p.pgid for p in record.processes if p.pgid])
    state = record.state if live or record.state in ("stopped", "failed") else "exited"
    return {"run": record.run, "state": state, "alive": live, "engine": record.engine, "model": record.model,
            "served_name": record.served_name, "url": record.url, "pids": record.pids,
            "started": record.times.get("started")}


def ps_command(output_format: str, show_all: bool) -> int:
    from servekit.launch.records import all_records

    rows = [_row(r) for r in all_records()]
    if not show_all:
        rows = [r for r in rows if r["alive"]]
    if output_format == "json":
        typer.echo(json.dumps(rows, indent=2))
        return 0
    if not rows:
        typer.echo("no runs" + ("" if show_all else " alive (servekit ps --all lists stopped ones)"))
    for row in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["started"])) if row["started"] else "-"
        typer.echo(f"{row['run']}  {row['state']:8}  {row['engine']:8}  {row['url']}  {row['served_name']}  {started}")
    return 0


def register(app: typer.Typer) -> None:
    @app.command("ps")
    def _ps(
        output_format: str = typer.Option("text", "--format", help="text or json"),
        show_all: bool = typer.Option(False, "--all", help="Also runs that are no longer alive."),
    ) -> None:
        """The runs `servekit up` started: state, engine, endpoint."""
        ps_command(output_format, show_all)
