"""``servekit list [recipes|hardware|strategies|features|gpus]``: what the catalog offers, and the
GPUs servekit's device tables know."""

from __future__ import annotations

import json
from enum import Enum

import typer

CATALOG_HELP = ("Catalog directory to read alone (default: $SERVEKIT_CATALOG, else the bundled catalog "
                "over the one `servekit catalog sync` fetched).")


class Listing(str, Enum):
    recipes = "recipes"
    hardware = "hardware"
    strategies = "strategies"
    features = "features"
    gpus = "gpus"


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


def _recipe_lines(rows) -> list[str]:
    lines = []
    for info in rows:
        summary = info.summary()
        name = f"  {info.display_name}" if info.display_name and info.display_name != info.id.split("/")[-1] else ""
        lines.append(f"{info.id}{name}  [{info.source}]  variants: {', '.join(summary['variants']) or '-'}"
                     f"  hardware: {', '.join(summary['hardware']) or '-'}")
    lines.append(f"{len(rows)} recipe(s); `servekit show MODEL` for one in detail")
    return lines


def _table_lines(rows: list[dict], columns: list[str]) -> list[str]:
    width = {c: max([len(c), *(len(str(r.get(c) if r.get(c) is not None else "-")) for r in rows)]) for c in columns}
    lines = ["  ".join(c.ljust(width[c]) for c in columns).rstrip()]
    for row in rows:
        cells = [row.get(c) for c in columns]
        text = [", ".join(v) if isinstance(v, list) else ("-" if v is None else str(v)) for v in cells]
        lines.append("  ".join(t.ljust(width[c]) for t, c in zip(text, columns)).rstrip())
    return lines


def _parts_line(listed: set[str]) -> str:
    """The GPUs of the device table that ``--hardware`` also takes (``servekit.app.part_hardware``)."""
    from servekit.app.part_hardware import part_ids

    parts = [pid for pid in part_ids() if pid not in listed]
    return (f"also as --hardware for fit, perf and plan: a GPU of the device table, one card or _Nx cards "
            f"(l4, l4_4x): {', '.join(parts)}")


GPU_COLUMNS = ["id", "brand", "generation", "link", "nominal_gb", "memory_gib", "memory", "bf16_tflops",
               "memory_gb_s", "hardware"]
GPU_NOTE = ("memory_gib: what the engine sees on one card; measured: a public start-up log (`--format json` gives "
            "each source), assumed: the datasheet size priced by the assumed-memory rule. hardware: --hardware "
            "takes the id (a catalog profile of the same id plans with the catalog's own size).")

_COLUMNS = {
    "hardware": ["id", "display_name", "brand", "gpu_count", "vram_gb", "recipes"],
    "strategies": ["name", "display_name", "deploy_type", "recipes"],
    "features": ["name", "recipes", "modes"],
}


def list_command(what: str, hardware: str | None, feature: str | None, catalog: str | None,
                 output_format: str) -> int:
    from servekit.app import discovery
    from servekit.catalog.documents import read_documents, resolve_catalog_dir
    from servekit.errors import SelectionError

    if what != Listing.recipes.value and (hardware or feature):
        raise SelectionError(f"--hardware and --feature filter recipes, not {what}",
                             fix=f"run `servekit list --hardware ...` or `servekit list {what}` alone")
    if what == Listing.gpus.value:
        from servekit.app.part_hardware import gpu_rows

        rows = gpu_rows()
        shown = [{**row, "hardware": "yes" if row["hardware"] else "no"} for row in rows]
        text = "\n".join([*_table_lines(shown, GPU_COLUMNS), GPU_NOTE])
        typer.echo(json.dumps(rows, indent=2) if output_format == OutputFormat.json.value else text)
        return 0
    docs = read_documents(resolve_catalog_dir(catalog))
    if what == Listing.recipes.value:
        rows = discovery.list_recipes(docs, hardware=hardware, feature=feature)
        payload = [r.summary() for r in rows]
        lines = _recipe_lines(rows)
    else:
        payload = {"hardware": discovery.list_hardware, "strategies": discovery.list_strategies,
                   "features": discovery.list_features}[what](docs)
        lines = _table_lines(payload, _COLUMNS[what])
        if what == Listing.hardware.value:
            lines.append(_parts_line({row["id"] for row in payload}))
    typer.echo(json.dumps(payload, indent=2) if output_format == OutputFormat.json.value else "\n".join(lines))
    return 0


def register(app: typer.Typer) -> None:
    from servekit.app.discovery import FEATURE_CHOICES, HARDWARE_CHOICES

    @app.command("list")
    def _list(
        what: Listing = typer.Argument(Listing.recipes, help="What to list: recipes (default), hardware, "
                                       "strategies or features of the catalog in use, or the GPUs of servekit's "
                                       "device tables (memory the engine sees, speed figures)."),
        hardware: str | None = typer.Option(None, "--hardware", help=f"Only recipes marked to run on it: {HARDWARE_CHOICES}."),
        feature: str | None = typer.Option(None, "--feature", help=f"Only recipes that offer it: {FEATURE_CHOICES}."),
        catalog: str | None = typer.Option(None, "--catalog", help=CATALOG_HELP),
        output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text (for people) or json (for programs)."),
    ) -> None:
        """List the catalog's recipes (with their source, variants and hardware), or its hardware
        profiles, strategies or features, or the GPUs servekit's device tables know."""
        raise SystemExit(list_command(what.value, hardware, feature, catalog, output_format.value))
