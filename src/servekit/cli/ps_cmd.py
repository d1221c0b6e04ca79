"""``servekit ps``: the runs recorded under servekit's home, whether their processes live, where
they serve; each process of a run (engine servers, router, companions) on a line of its own."""

from __future__ import annotations

import json
import time

import typer


def _process_row(process) -> dict:
    from servekit.processes import alive

    live = alive([process.pid] if process.pid else [], [process.pgid] if process.pgid else [])
    return {"role": process.role, "kind": process.kind, "pid": process.pid, "pgid": process.pgid,
            "alive": bool(live), "url": process.url, "log": process.log,
            **({"container": process.container} if process.container else {})}


def _row(record) -> dict:
    from servekit.processes import alive

    live = alive(record.pids, record.groups)
    state = record.state if live or record.state in ("stopped", "failed") else "exited"
    return {"run": record.run, "state": state, "alive": live, "engine": record.engine, "model": record.model,
            "served_name": record.served_name, "url": record.url, "pids": record.pids,
            "started": record.times.get("started"), "processes": [_process_row(p) for p in record.processes]}


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
        for proc in row["processes"] if len(row["processes"]) > 1 else ():
            where = proc.get("container") or proc["url"] or "-"
            typer.echo(f"  {proc['role']:16} {proc['kind']:9} pid {proc['pid']}  "
                       f"{'alive' if proc['alive'] else 'gone':5}  {where}  {proc['log']}")
    return 0


def register(app: typer.Typer) -> None:
    @app.command("ps")
    def _ps(
        output_format: str = typer.Option("text", "--format", help="text or json"),
        show_all: bool = typer.Option(False, "--all", help="Also runs that are no longer alive."),
    ) -> None:
        """The runs `servekit up` started: state, engine, endpoint."""
        ps_command(output_format, show_all)
