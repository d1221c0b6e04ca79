"""``servekit catalog validate|sync|list``: check a catalog, fetch the public one, show those in use."""

from __future__ import annotations

import json
import sys
from enum import Enum

import typer

SOURCE_HELP = (
    "Where to fetch the catalog from: an archive URL (.tar.gz/.zip over http(s)), a git URL "
    "(https://...git, git://, ssh://, file:// or git+URL), or a local directory or archive "
    "(default: the main branch of github.com/vllm-project/recipes)."
)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


def validate_command(directory: str | None = None, output_format: str = "text", strict: bool = False) -> int:
    """Validate the catalog at ``directory`` (default: $SERVEKIT_CATALOG or the bundled one).

    Prints each finding and a summary; returns 0 when there are no errors (warnings are
    printed but allowed; with ``strict`` they fail too) and 1 otherwise.
    """
    from servekit.catalog.documents import resolve_catalog_dir
    from servekit.catalog.validate import validate_catalog
    from servekit.errors import CatalogError

    try:
        root = resolve_catalog_dir(directory)
    except CatalogError as exc:
        raise CatalogError(exc.message, location=exc.location,
                           fix="name an existing catalog directory: servekit catalog validate DIR") from None
    findings = validate_catalog(root)
    errors = sum(1 for f in findings if f.is_error)
    warnings = len(findings) - errors
    failed = errors > 0 or (strict and warnings > 0)
    if output_format == OutputFormat.json.value:
        payload = {
            "catalog": str(root),
            "ok": not failed,
            "errors": errors,
            "warnings": warnings,
            "findings": [f.to_json() for f in findings],
        }
        typer.echo(json.dumps(payload, indent=2))
    else:
        for finding in findings:
            typer.echo(finding.render())
        verdict = "FAILED" if failed else "ok"
        typer.echo(f"{root}: {verdict}: {errors} error(s), {warnings} warning(s)")
    return 1 if failed else 0


def _progress_bar():
    """A rich progress bar for a download when stdout is a terminal; else None (silent)."""
    if not sys.stdout.isatty():
        return None, None
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    bar = Progress("downloading", BarColumn(), DownloadColumn(), TransferSpeedColumn(), transient=True)
    task = bar.add_task("catalog", total=None)

    def advance(done: int, total: int | None) -> None:
        bar.update(task, completed=done, total=total)

    return bar, advance


def _sync_error(exc, output_format: str) -> int:
    findings = getattr(exc, "findings", [])
    for finding in findings:
        typer.echo(finding.render(), err=True)
    typer.echo(f"error: {exc}", err=True)
    if output_format == OutputFormat.json.value:
        payload = {"ok": False, "error": str(exc), "findings": [f.to_json() for f in findings]}
        typer.echo(json.dumps(payload, indent=2))
    return 1


def sync_command(source: str | None, output_format: str = "text") -> int:
    """Fetch, validate and store a catalog; prints what changed. Returns the exit code."""
    from servekit.catalog.store import describe_age, synced_catalog_root
    from servekit.catalog.sync import sync_catalog
    from servekit.errors import ServekitError

    bar, advance = _progress_bar() if output_format == OutputFormat.text.value else (None, None)
    try:
        if bar is not None:
            with bar:
                result = sync_catalog(source, advance)
        else:
            result = sync_catalog(source)
    except ServekitError as exc:
        return _sync_error(exc, output_format)
    rec = result.record
    if output_format == OutputFormat.json.value:
        payload = {"ok": True, "changed": result.changed, "path": str(synced_catalog_root()),
                   **rec.to_json(), "findings": [f.to_json() for f in result.warnings]}
        typer.echo(json.dumps(payload, indent=2))
        return 0
    if not result.changed:
        typer.echo(f"already up to date: {rec.recipe_count} recipes from {rec.source} "
                   f"(revision {rec.revision}, synced {describe_age(rec.age_seconds())} ago)")
        return 0
    for finding in result.warnings:
        typer.echo(finding.render())
    typer.echo(f"synced {rec.recipe_count} recipes from {rec.source} (revision {rec.revision}) "
               f"into {synced_catalog_root()}; {len(result.warnings)} warning(s)")
    return 0


def list_command(catalog: str | None, output_format: str = "text") -> int:
    """The catalogs a plan reads now, top layer first."""
    from servekit.catalog.documents import resolve_catalog_dir
    from servekit.catalog.layers import catalogs_in_use
    from servekit.catalog.store import describe_age

    used = catalogs_in_use(resolve_catalog_dir(catalog))
    if output_format == OutputFormat.json.value:
        typer.echo(json.dumps([c.to_json() for c in used], indent=2))
        return 0
    for entry in used:
        age = f", synced {describe_age(entry.age_seconds)} ago" if entry.age_seconds is not None else ""
        typer.echo(f"{entry.name}: {entry.recipe_count} recipes from {entry.source} "
                   f"(revision {entry.revision}{age}) at {entry.path}")
    if len(used) > 1:
        typer.echo("recipes of the upper catalog win for the ids both define")
    return 0


def _register_sync(group: typer.Typer) -> None:
    @group.command("sync")
    def _sync(
        source: str | None = typer.Argument(None, help=SOURCE_HELP),
        output_format: OutputFormat = typer.Option(
            OutputFormat.text, "--format", help="text (one summary line) or json (the stored record)."
        ),
    ) -> None:
        """Fetch a recipes catalog, validate it and keep it under servekit's home.

        The synced recipes are layered under the bundled catalog whenever no --catalog is given.
        A sync that fails or is interrupted leaves the earlier copy in use.
        """
        raise SystemExit(sync_command(source, output_format.value))

    @group.command("list")
    def _list(
        catalog: str | None = typer.Option(
            None, "--catalog", help="A catalog directory to show instead of the default (bundled over synced)."
        ),
        output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json."),
    ) -> None:
        """The catalogs in use: bundled, synced or the one --catalog names, with source, revision and age."""
        raise SystemExit(list_command(catalog, output_format.value))


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Inspect and check recipe catalogs.", no_args_is_help=True)

    @group.command("validate")
    def _validate(
        directory: str | None = typer.Argument(
            None, help="Catalog directory (default: $SERVEKIT_CATALOG or the bundled catalog)."
        ),
        output_format: OutputFormat = typer.Option(
            OutputFormat.text, "--format", help="text (one line per finding) or json."
        ),
        strict: bool = typer.Option(False, "--strict", help="Fail on warnings too."),
    ) -> None:
        """Check every file: YAML syntax, types, unknown keys and cross-references."""
        # SystemExit, not typer.Exit: the CLI runs click with standalone_mode=False, where an
        # Exit's code is returned from app() rather than raised, and would be lost.
        raise SystemExit(validate_command(directory, output_format.value, strict))

    _register_sync(group)
    app.add_typer(group, name="catalog")
