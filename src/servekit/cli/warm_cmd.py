"""``servekit warm-cache MODEL [plan choices]``: fetch what the plan loads, verify, pre-compile."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack

import typer

from servekit.errors import ServekitError
from servekit.records import record


@record
class WarmCommand:
    model: str | None
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    features: tuple[str, ...] = ()
    no_features: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    engine: str = "vllm"
    catalog: str | None = None
    command: str | None = None
    dry_run: bool = False
    output_format: str = "text"
    target: str | None = None
    skip_precompile: bool = False
    skip_hashes: bool = False


def _rich_progress(stack: ExitStack):
    """A rich progress display on stderr, one bar per repo; None when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        return None
    progress = stack.enter_context(
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
    )

    def start(repo_id: str, total: int):
        task = progress.add_task(repo_id, total=total or None)
        return lambda n: progress.advance(task, n)

    return start


def _missing_local_paths(report) -> None:
    """A local model path that does not exist is an error (a dry run downloads nothing, but says so)."""
    missing = [r.fetch.artifact.repo_id for r in report.repos if r.fetch.artifact.local and r.missing()]
    if missing:
        raise ServekitError(f"local path {missing[0]} does not exist" + (
            f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            fix="pass an existing checkpoint directory, or a Hugging Face repo id such as Qwen/Qwen3-8B")


def warm_command(opts: WarmCommand) -> int:
    from servekit.app.request import PlanRequest
    from servekit.app.warm import targets_from_command, targets_from_plan
    from servekit.catalog.faults import recipe_faults
    from servekit.synthesis.resolve import parse_mode_pairs
    from servekit.warm.engine_steps import StepContext
    from servekit.warm.hub import HubSettings
    from servekit.warm.render import json_document, render_text
    from servekit.warm.runner import WarmOptions, warm_cache

    if opts.output_format not in ("text", "json"):
        raise ServekitError(f"--format {opts.output_format!r} is not text or json")
    if opts.command and opts.model:
        raise ServekitError(f"MODEL {opts.model!r} and --command both given; the command names what to load",
                            fix="leave out MODEL, or leave out --command")
    if opts.command:
        resolved = targets_from_command(opts.command, opts.engine)
    elif opts.model:
        with recipe_faults(opts.catalog, opts.model):
            resolved = targets_from_plan(
                PlanRequest(
                    opts.model, hardware=opts.hardware, variant=opts.variant, strategy=opts.strategy,
                    nodes=opts.nodes, features=opts.features, no_features=opts.no_features,
                    modes=parse_mode_pairs(opts.modes), engine=opts.engine, checks=False, catalog=opts.catalog,
                )
            )
    else:
        raise ServekitError(
            "name a MODEL (a recipe id) or pass --command", fix="e.g. servekit warm-cache Qwen/Qwen3.8-27B"
        )
    settings = HubSettings.from_env()
    options = WarmOptions(dry_run=opts.dry_run, precompile=not opts.skip_precompile, verify_hashes=not opts.skip_hashes)
    steps = StepContext(settings, resolved.hardware, resolved.profile, opts.target)
    with ExitStack() as stack:
        progress = _rich_progress(stack) if opts.output_format == "text" and not opts.dry_run else None
        report = warm_cache(resolved.targets, settings, options, steps, progress)
    if opts.dry_run:  # a real run reports it among the missing items
        _missing_local_paths(report)
    if opts.output_format == "json":
        typer.echo(json.dumps(json_document(report, resolved.description), indent=2))
    else:
        typer.echo(render_text(report, resolved.description))
    if not report.ok:
        why = f"{len(report.missing)} item(s) the engine needs are missing from the cache or damaged" + (
            f"; {report.offline}" if report.offline else ""
        )
        failed = [s for s in report.steps if s.status == "failed"]
        print(
            f"error: {why if report.missing else f'pre-compile step {failed[0].engine} {failed[0].name} failed'}",
            file=sys.stderr,
        )
        return 1
    return 0


def register(app: typer.Typer) -> None:
    from servekit.app.engine_choice import engine_help

    @app.command("warm-cache")
    def _warm_cache(
        model: str = typer.Argument(None, help="Recipe id, e.g. Qwen/Qwen3.8-27B"),
        hardware: str = typer.Option(None, "--hardware", help="Hardware profile id (default: the recipe's)."),
        variant: str = typer.Option(None, "--variant", help="Variant key (default: default)."),
        strategy: str = typer.Option(None, "--strategy", help="Serving strategy (default: recommended)."),
        nodes: int = typer.Option(None, "--nodes", help="Node count (default: the strategy's)."),
        feature: list[str] = typer.Option([], "--feature", help="Enable a feature (repeatable)."),
        no_feature: list[str] = typer.Option([], "--no-feature", help="Disable a feature (repeatable)."),
        mode: list[str] = typer.Option([], "--mode", help="FEATURE=MODE (repeatable)."),
        engine: str = typer.Option("vllm", "--engine", help=engine_help()),
        catalog: str = typer.Option(None, "--catalog", help="Catalog directory (default: bundled)."),
        command: str = typer.Option(None, "--command", help="Warm for this launch command instead of a plan."),
        dry_run: bool = typer.Option(False, "--dry-run", help="List repos, files and bytes; fetch nothing."),
        output_format: str = typer.Option("text", "--format", help="text or json"),
        target: str = typer.Option(None, "--target", help="MAX compile target, e.g. cuda:sm_90 or auto."),
        skip_precompile: bool = typer.Option(False, "--skip-precompile", help="Only download and verify."),
        skip_hashes: bool = typer.Option(False, "--skip-hashes", help="Verify sizes only, not sha256."),
    ) -> None:
        """Download exactly what the plan's engines load into the Hugging Face cache, verify it, pre-compile."""
        code = warm_command(
            WarmCommand(
                model,
                hardware,
                variant,
                strategy,
                nodes,
                tuple(feature),
                tuple(no_feature),
                tuple(mode),
                engine,
                catalog,
                command,
                dry_run,
                output_format,
                target,
                skip_precompile,
                skip_hashes,
            )
        )
        if code:
            raise SystemExit(code)  # survives click's standalone_mode=False, unlike typer.Exit
