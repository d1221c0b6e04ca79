"""``servekit facts fetch MODEL``: a model's config.json and safetensors headers, without weights.

What is fetched lands in the Hugging Face cache (config.json, the safetensors index) and in
servekit's home (the headers: ``$SERVEKIT_HOME/facts/safetensors``); ``servekit plan``, ``fit``
and ``api build`` read them offline from there.
"""

from __future__ import annotations

import json
import sys

import typer

FORMATS = ("text", "json")


def _lines(summaries: list[dict]) -> list[str]:
    lines = []
    for s in summaries:
        weights = s["weights_bytes"]
        size = f"{weights / (1 << 30):.2f} GiB" if weights else "unknown"
        headers = (f"{s['safetensors_shards']} safetensors header(s) -> {s['headers']}" if s["headers"]
                   else "no safetensors files")
        lines += [f"{s['repo_id']} @ {s['commit'][:12]} ({s['named_by']})",
                  f"  config.json -> {s['config']}",
                  f"  {headers}",
                  f"  {s['architecture'] or 'no architecture'}, {s['layers']} layers, weights {size}"]
    return lines


def facts_fetch_command(model: str, variant: str | None, revision: str | None, catalog: str | None,
                        output_format: str) -> int:
    from servekit.app.facts_fetch import fetch_model_facts
    from servekit.errors import SelectionError

    if output_format not in FORMATS:
        raise SelectionError(f"unknown format {output_format!r}; valid choices: {', '.join(FORMATS)}")
    summaries = fetch_model_facts(model, variant=variant, revision=revision, catalog=catalog)
    if output_format == "json":
        sys.stdout.write(json.dumps(summaries, indent=2) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in _lines(summaries)))
    return 0


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Model facts (config.json, safetensors headers) for plans and fit checks.",
                        no_args_is_help=True)

    @group.command("fetch")
    def _fetch(
        model: str = typer.Argument(..., help="A recipe id (its variants' checkpoints), a Hugging Face id "
                                              "ORG/NAME, or a URL https://huggingface.co/ORG/NAME[/tree/REV]."),
        variant: str | None = typer.Option(None, "--variant", help="Only this variant of a recipe."),
        revision: str | None = typer.Option(None, "--revision", help="Branch, tag or commit (default: main)."),
        catalog: str | None = typer.Option(None, "--catalog", help="Catalog directory that names the recipe."),
        output_format: str = typer.Option("text", "--format", help="text (for people) or json (for programs)."),
    ) -> None:
        """Fetch a model's config.json and safetensors headers (HTTP range requests, no weights)
        from the hub (HF_ENDPOINT) into the caches that plan, fit and api build read offline."""
        raise typer.Exit(facts_fetch_command(model, variant, revision, catalog, output_format))

    app.add_typer(group, name="facts")
