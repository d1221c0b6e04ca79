"""``servekit show MODEL``: one recipe in detail (variants, hardware, features, strategies, origin)."""

from __future__ import annotations

import json

import typer

from servekit.cli.list_cmd import CATALOG_HELP, OutputFormat


def _detail_lines(info) -> list[str]:
    lines = [f"{info.id}" + (f"  ({info.display_name})" if info.display_name else ""),
             f"  from: {info.source}" + (f" ({info.file})" if info.file else "")]
    if info.architecture or info.parameter_count:
        lines.append(f"  model: {info.architecture or '-'}, {info.parameter_count or '?'} parameters")
    lines.append("  variants:")
    for v in info.variants:
        vram = f", needs {v.vram_minimum_gb} GB" if v.vram_minimum_gb is not None else ""
        only = f", only on {', '.join(v.supported_hardware)}" if v.supported_hardware else ""
        lines.append(f"    {v.name}: {v.precision or '?'} {v.model_id}{vram}{only}")
    marks = ", ".join(f"{hw} ({mark})" for hw, mark in info.hardware.items())
    lines.append(f"  hardware: {marks or '-'}")
    lines.append("  features:" if info.features else "  features: -")
    for f in info.features:
        modes = f" modes: {', '.join(f.modes)}" + (f" (default {f.default_mode})" if f.default_mode else "") if f.modes else ""
        state = "opt-in" if f.opt_in else "on by default"
        lines.append(f"    {f.name} [{state}]{modes}" + (f": {f.description}" if f.description else ""))
    lines.append(f"  strategies: {', '.join(info.strategies) or '-'}")
    return lines


def show_command(model: str, catalog: str | None, output_format: str) -> int:
    from servekit.app.discovery import show_recipe
    from servekit.catalog.documents import read_documents, resolve_catalog_dir

    info = show_recipe(read_documents(resolve_catalog_dir(catalog)), model)
    text = json.dumps(info.detail(), indent=2) if output_format == OutputFormat.json.value else "\n".join(_detail_lines(info))
    typer.echo(text)
    return 0


def register(app: typer.Typer) -> None:
    from servekit.app.discovery import MODEL_CHOICES

    @app.command("show")
    def _show(
        model: str = typer.Argument(..., help=f"The model: {MODEL_CHOICES}."),
        catalog: str | None = typer.Option(None, "--catalog", help=CATALOG_HELP),
        output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text (for people) or json (for programs)."),
    ) -> None:
        """One recipe in detail: variants with precision and checkpoint, hardware, features and
        their modes, strategies, and the catalog it comes from."""
        raise SystemExit(show_command(model, catalog, output_format.value))
