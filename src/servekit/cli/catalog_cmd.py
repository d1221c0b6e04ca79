"""``servekit catalog validate [DIR]``: every problem in a catalog, with file, line and key path."""

from __future__ import annotations

import json
from enum import Enum

import typer


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


def validate_command(directory: str | None = None, output_format: str = "text") -> int:
    """Validate the catalog at ``directory`` (default: $SERVEKIT_CATALOG or the bundled one).

    Prints each finding and a summary; returns 0 when there are no errors (warnings are
    printed but allowed) and 1 otherwise.
    """
    from servekit.catalog.documents import resolve_catalog_dir
    from servekit.catalog.validate import validate_catalog

    root = resolve_catalog_dir(directory)
    findings = validate_catalog(root)
    errors = sum(1 for f in findings if f.is_error)
    warnings = len(findings) - errors
    if output_format == OutputFormat.json.value:
        payload = {
            "catalog": str(root),
            "ok": errors == 0,
            "errors": errors,
            "warnings": warnings,
            "findings": [f.to_json() for f in findings],
        }
        typer.echo(json.dumps(payload, indent=2))
    else:
        for finding in findings:
            typer.echo(finding.render())
        verdict = "ok" if errors == 0 else "FAILED"
        typer.echo(f"{root}: {verdict}: {errors} error(s), {warnings} warning(s)")
    return 0 if errors == 0 else 1


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
    ) -> None:
        """Check every file: YAML syntax, types, unknown keys and cross-references."""
        # SystemExit, not typer.Exit: the CLI runs click with standalone_mode=False, where an
        # Exit's code is returned from app() rather than raised, and would be lost.
        raise SystemExit(validate_command(directory, output_format.value))

    app.add_typer(group, name="catalog")
