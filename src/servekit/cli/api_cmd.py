"""``servekit api build``: the static JSON API tree for a catalog."""

from __future__ import annotations

import sys

import typer

from servekit.errors import ServekitError

SKIPPED_SHOWN = 5


def build_command(out: str, catalog: str | None = None, jobs: int | None = None, full: bool = False) -> int:
    from servekit.api.publish import build_api
    from servekit.catalog.documents import resolve_catalog_dir
    from servekit.catalog.faults import SHAPE_ERRORS, catalog_faults

    if jobs is not None and jobs < 1:
        raise ServekitError(f"--jobs must be at least 1, not {jobs}")
    # a build worker reports its crash to the parent as a RuntimeError
    with catalog_faults(resolve_catalog_dir(catalog), errors=(*SHAPE_ERRORS, RuntimeError)):
        summary = build_api(out, catalog, jobs=jobs, full=full)
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
        full: bool = typer.Option(
            False, "--full", help="Render every recipe and replace the whole tree, even when an earlier build's "
            "manifest would allow re-rendering only the changed recipes."
        ),
    ) -> None:
        """Render every recipe, hardware and strategy into JSON files under --out.

        A rebuild into the tree of an earlier build re-renders only the recipes whose files
        changed (and those sharing a published id with them) and rewrites the index files; a
        change to servekit, the cached model facts, the taxonomy, strategies, kv_store or
        platforms, or to the tree by hand, rebuilds everything. Every build prepares a complete
        new version beside --out (in .OUT.servekit/) and swaps it in with one atomic step:
        readers see the old tree or the new one, and a build killed at any point leaves one of
        them."""
        raise typer.Exit(build_command(out, catalog, jobs, full))

    app.add_typer(group, name="api")
