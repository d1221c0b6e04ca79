"""``servekit plan``: one launch plan for people or programs, or a batch of them.

Kept import-light: the JSON path loads only the one recipe it needs and never imports
pydantic or rich.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import typer


@dataclass
class PlanOptions:
    model: str | None = None
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    features: list[str] = field(default_factory=list)
    no_features: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    kv_offload: str | None = None
    engine: str = "vllm"
    catalog: str | None = None
    output_format: str = "text"
    batch: str | None = None
    task: str | None = None
    checks: bool | None = None
    target: str | None = None
    qaic_mode: str | None = None
    devices: str | None = None


def _load(catalog: str | None, recipe_id: str | None):
    from servekit.catalog.documents import read_documents, resolve_catalog_dir

    root = resolve_catalog_dir(catalog)
    return read_documents(root, only_recipes=None if recipe_id is None else [recipe_id])


def _find_model(opts: PlanOptions):
    """(docs, recipe id, variant) for MODEL: a recipe id, or a variant's checkpoint id."""
    from servekit.synthesis.resolve import unknown_name

    docs = _load(opts.catalog, opts.model)
    if opts.model in docs.recipes:
        return docs, opts.model, opts.variant
    docs = _load(opts.catalog, None)
    for rid, recipe in docs.recipes.items():
        variants = recipe.get("variants")
        for key, variant in (variants.items() if isinstance(variants, dict) else ()):
            if isinstance(variant, dict) and variant.get("model_id") == opts.model and opts.variant in (None, key):
                return docs, rid, key
    raise unknown_name("recipe", opts.model, sorted(docs.recipes))


def batch_command(path: str, catalog: str | None) -> int:
    from servekit.cli.inputs import open_input, write_json_lines
    from servekit.synthesis.batch import plan_lines

    with open_input(path, "batch file") as handle:  # a missing file fails before the catalog is read
        write_json_lines(plan_lines(_load(catalog, None), handle), path, "batch file", ensure_ascii=False)
    return 0


def plan_command(opts: PlanOptions) -> int:
    """Resolve, synthesize and print one plan; returns the exit code."""
    from servekit.errors import SelectionError

    if opts.batch is not None:
        return batch_command(opts.batch, opts.catalog)
    if not opts.model:
        raise SelectionError("name a MODEL (a recipe id such as Qwen/Qwen3.8-27B) or pass --batch FILE")
    from servekit.catalog.faults import catalog_faults
    from servekit.synthesis.resolve import parse_mode_pairs, resolve_selection
    from servekit.synthesis.synthesize import check_engine, synthesize

    check_engine(opts.engine)
    docs, recipe_id, variant = _find_model(opts)
    with catalog_faults(docs.root, docs.sources.get(f"models/{recipe_id}")):
        selection = resolve_selection(
            docs, recipe_id, hardware=opts.hardware, variant=variant, strategy=opts.strategy,
            node_count=opts.nodes, enable=opts.features, disable=opts.no_features,
            modes=parse_mode_pairs(opts.modes), kv_offload=opts.kv_offload, engine=opts.engine,
            **({"omni_task": opts.task} if opts.task else {}),
        )
        plan = synthesize(docs, selection)
        commands = _translate(docs, plan, opts) if opts.engine != "vllm" else None
        checks = None
        if opts.checks is not False:
            from servekit.synthesis.checks import checks_pass, plan_checks

            checks = plan_checks(docs, plan)
    valid = commands is None or all(pc.command.valid for pc in commands)
    if opts.output_format == "json":
        from servekit.synthesis.render import render_plan, servekit_extras

        payload = render_plan(plan)
        extras = servekit_extras(plan)
        if commands is not None:
            from servekit.synthesis.engine_view import render_engine_plan

            payload = render_engine_plan(payload, commands, opts.engine)
            extras["engine_commands"] = [pc.to_dict() for pc in commands]
        if checks is not None:
            extras["checks"] = checks
        payload["servekit"] = extras
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_text(plan, commands, checks)
    if checks is not None and not checks_pass(checks):
        sys.stderr.write("error: this plan cannot start as it stands; see the checks and their fixes\n")
        return 1
    return 0 if valid else 1


def _translate(docs, plan, opts: PlanOptions):
    """The plan's processes in another engine's form (findings included)."""
    from servekit.engines.plan_translate import translate_plan

    options: dict = {}
    if opts.target:
        options["target"] = opts.target
    if opts.qaic_mode:
        options["mode"] = opts.qaic_mode
    if opts.devices:
        options["devices"] = _parse_devices(opts.devices)
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(plan.selection.hardware)
    return translate_plan(plan, opts.engine, hardware=profile, options=options)


def _parse_devices(text: str):
    from servekit.errors import SelectionError

    if text == "cpu":
        return "cpu"
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SelectionError(f"--devices expects ids like 0,1 or 'cpu', got {text!r}") from None


def _print_text(plan, commands=None, checks=None) -> None:
    from rich.console import Console
    from rich.markup import escape

    from servekit.synthesis.explain import explain

    console = Console(highlight=False, soft_wrap=True)
    lines = explain(plan)
    if commands is not None:
        from servekit.engines.plan_translate import explain_commands

        summary = [line for line in lines[:6] if not line.startswith(("image:", "install:"))]
        lines = summary + explain_commands(commands)
    if checks is not None:
        from servekit.synthesis.checks import check_lines

        lines = lines + ["## checks", *check_lines(checks)]
    for line in lines:
        if line.startswith("#"):
            console.print(f"[bold cyan]{escape(line)}[/]")
        elif line.startswith(("note:", "  ") ) and "<-" in line:
            command, _, reason = line.partition("<-")
            console.print(f"{escape(command)}[dim]<-{escape(reason)}[/]")
        else:
            console.print(escape(line))


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def _plan(
        model: str | None = typer.Argument(None, help="Recipe id (e.g. Qwen/Qwen3.8-27B) or a variant's checkpoint id."),
        hardware: str | None = typer.Option(None, "--hardware", help="Hardware profile id (default: the recipe's)."),
        variant: str | None = typer.Option(None, "--variant", help="Variant key (default: default)."),
        strategy: str | None = typer.Option(None, "--strategy", help="Serving strategy (default: recommended)."),
        nodes: int | None = typer.Option(None, "--nodes", help="Node count (default: the strategy's)."),
        feature: list[str] = typer.Option([], "--feature", help="Enable a feature (repeatable)."),
        no_feature: list[str] = typer.Option([], "--no-feature", help="Disable a feature (repeatable)."),
        mode: list[str] = typer.Option([], "--mode", help="FEATURE=MODE for a feature with modes (repeatable)."),
        kv_offload: str | None = typer.Option(None, "--kv-offload", help="KV offload option or kv-store deployment."),
        engine: str = typer.Option("vllm", "--engine", help="Engine dialect to render for."),
        catalog: str | None = typer.Option(None, "--catalog", help="Catalog directory (default: bundled)."),
        output_format: str = typer.Option("text", "--format", help="text (for people) or json (for programs)."),
        batch: str | None = typer.Option(None, "--batch", help="JSONL file of selections ('-' = stdin)."),
        task: str | None = typer.Option(None, "--task", help="vLLM-Omni task key (omni recipes; default: first)."),
        checks: bool | None = typer.Option(None, "--checks/--no-checks",
                                           help="Fit checks (default: on; --no-checks leaves them out)."),
        target: str | None = typer.Option(None, "--target", help="MAX compile target, e.g. cuda:sm_90 or auto."),
        qaic_mode: str | None = typer.Option(None, "--qaic-mode", help="QAIC: aot (compile first) or pyt."),
        devices: str | None = typer.Option(None, "--devices", help="Device ids for MAX/QAIC, e.g. 0,1 (or cpu)."),
    ) -> None:
        """Plan a deployment: the exact commands, env, image, install steps and why."""
        from servekit.errors import SelectionError

        if output_format not in ("text", "json"):
            raise SelectionError(f"unknown format {output_format!r}; valid choices: text, json")
        opts = PlanOptions(model, hardware, variant, strategy, nodes, list(feature), list(no_feature),
                           list(mode), kv_offload, engine, catalog, output_format, batch, task, checks,
                           target, qaic_mode, devices)
        raise typer.Exit(plan_command(opts))
