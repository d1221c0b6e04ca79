"""``servekit api build``: the static JSON API tree for a catalog."""

from __future__ import annotations

import sys

import typer

from servekit.errors import ServekitError

SKIPPED_SHOWN = 5


def build_command(out: str, catalog: str | None = None, jobs: int | None = None) -> int:
    from servekit.api.publish import build_api
    from servekit.catalog.documents import resolve_catalog_dir
    from servekit.catalog.faults import SHAPE_ERRORS, catalog_faults

    if jobs is not None and jobs < 1:
        raise ServekitError(f"--jobs must be at least 1, not {jobs}")
    # a build worker reports its crash to the parent as a RuntimeError
    with catalog_faults(resolve_catalog_dir(catalog), errors=(*SHAPE_ERRORS, RuntimeError)):
        summary = build_api(out, catalog, jobs=jobs)
    typer.echo(summary.line())
    for line in summary.skipped[:SKIPPED_SHOWN]:
        print(f"  skipped {line}", file=sys.stderr)
    if len(summary.skipped) > SKIPPED_SHOWN:
        print(f"  ... and {len(summary.skipped) - SKIPPED_SHOWN} more", file=sys.stderr)
    return 0


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Build the static JSON API.", no_args_is_help=True)

    @group.command("build")
    def _build(
        out: str = typer.Option(..., "--out", help="Directory to (re)place the API tree in."),
        catalog: str | None = typer.Option(
            None, "--catalog", help="Catalog directory (default: $SERVEKIT_CATALOG or the bundled one)."
        ),
        jobs: int | None = typer.Option(None, "--jobs", help="Worker processes (default: one per CPU)."),
    ) -> None:
        """Render every recipe, hardware and strategy into JSON files under --out."""
        raise typer.Exit(build_command(out, catalog, jobs))

    app.add_typer(group, name="api")
