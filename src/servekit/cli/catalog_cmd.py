"""``servekit catalog validate [DIR]``: every problem in a catalog, with file, line and key path."""

from __future__ import annotations

import json
from enum import Enum

import typer


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

    root = resolve_catalog_dir(directory)
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

    app.add_typer(group, name="catalog")
