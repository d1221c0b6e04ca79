"""``servekit plan``: one launch plan for people or programs, or a batch of them.

Parses the options and prints what ``servekit.app.plan`` returns: a script a person can paste
(text), one POSIX script (sh), the rendering object (json) or Kubernetes YAML (k8s). Kept
import-light: the JSON path loads only the one recipe it needs and never imports pydantic or rich.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import typer

FORMATS = ("text", "json", "sh", "k8s")


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
    namespace: str | None = None
    name: str | None = None
    storage_class: str | None = None
    cache_size: str | None = None
    docker: bool = False
    max_model_len: str | None = None
    tp: int | None = None
    port: int | None = None
    gpu_memory_utilization: float | None = None
    image: str | None = None
    vllm_version: str | None = None
    pp: int | None = None


def batch_command(path: str, catalog: str | None) -> int:
    from servekit.app.batch import plan_lines
    from servekit.app.request import load_documents
    from servekit.cli.inputs import open_input, write_json_lines

    with open_input(path, "batch file") as handle:  # a missing file fails before the catalog is read
        written = write_json_lines(plan_lines(load_documents(catalog), handle), path, "batch file",
                                   ensure_ascii=False)
    return written.exit_code


def plan_request(opts: PlanOptions, documents=None):
    """The options as the planning pipeline's request (``documents``: a catalog already read)."""
    from servekit.app.request import EngineOptions, PlanRequest
    from servekit.app.run_site import RunSite
    from servekit.synthesis.resolve import parse_mode_pairs

    return PlanRequest(
        opts.model or "", hardware=opts.hardware, variant=opts.variant, strategy=opts.strategy, nodes=opts.nodes,
        features=tuple(opts.features), no_features=tuple(opts.no_features), modes=parse_mode_pairs(opts.modes),
        kv_offload=opts.kv_offload, engine=opts.engine, task=opts.task, checks=opts.checks is not False,
        engine_options=EngineOptions(opts.target, opts.qaic_mode, opts.devices), catalog=opts.catalog,
        site=RunSite(container=opts.docker or opts.output_format == "k8s", docker=opts.output_format != "k8s"),
        documents=documents,
    )


def plan_overrides(opts: PlanOptions):
    from servekit.synthesis.overrides import Overrides

    return Overrides(opts.max_model_len, opts.tp, opts.port, opts.gpu_memory_utilization, opts.image,
                     opts.vllm_version, opts.pp)


def _ignored_options(opts: PlanOptions) -> None:
    """Options the chosen form or engine does not read: an error rather than silence."""
    from servekit.app.engine_choice import translates
    from servekit.errors import SelectionError

    def dialect_names() -> list[str]:
        from servekit.engines.plan_translate import dialect_names as names

        return names()

    if opts.batch is not None and opts.model:
        raise SelectionError(f"MODEL {opts.model!r} and --batch both given; a batch names its models per line",
                             fix="leave out MODEL, or leave out --batch")
    engine_only = [name for name, value in (("--target", opts.target), ("--qaic-mode", opts.qaic_mode),
                                            ("--devices", opts.devices)) if value]
    if engine_only and not translates(opts.engine):
        verb = "apply" if len(engine_only) > 1 else "applies"
        raise SelectionError(f"{', '.join(engine_only)} only {verb} to engines that translate the plan, "
                             f"not {opts.engine}", fix=f"pass --engine with one of {', '.join(dialect_names())}, or leave them out")
    if opts.docker and opts.output_format in ("json", "k8s"):
        raise SelectionError(f"--docker shapes the text and sh forms; --format {opts.output_format} has no use for it",
                             fix="leave out --docker, or use --format text or --format sh")


def _engine_error(result) -> int:
    """A translated plan with error findings: its first error on stderr, exit 1."""
    from servekit.app.plan_view import engine_errors

    errors = engine_errors(result)
    if not errors:
        return 0
    first = errors[0]
    more = f" (and {len(errors) - 1} more error(s) in the plan)" if len(errors) > 1 else ""
    sys.stderr.write(f"error: {first.message}{more}" + (f" (fix: {first.fix})" if first.fix else "") + "\n")
    return 1


def slo_command(model: str | None, hardware: str | None, variant: str | None, engine: str, catalog: str | None,
                slo: str | None, workload: str | None, output_format: str) -> int:
    """``plan --slo ... --workload ...``: the fewest-device layout meeting the targets (exit 1: none does)."""
    from servekit.errors import SelectionError

    if not (model and hardware and slo and workload):
        raise SelectionError("--slo needs MODEL, --hardware and --workload",
                             fix="e.g. servekit plan MODEL --hardware h100 --slo ttft_ms=500,tpot_ms=50 "
                                 "--workload 1024:1024:64")
    from servekit.app.fit import FitOptions
    from servekit.app.slo import SloOptions, parse_slo, parse_workload, public, render_text, search
    from servekit.catalog.faults import recipe_faults

    opts = SloOptions(FitOptions(model=model, hardware=hardware, variant=variant, engine=engine, catalog=catalog),
                      parse_slo(slo), parse_workload(workload))
    with recipe_faults(catalog, model):
        result = search(opts)
    print(json.dumps(public(result), indent=2) if output_format == "json" else render_text(result))
    return 0 if result["met"] else 1


def plan_with_performance(opts: PlanOptions, workload: str) -> int:
    """``plan --workload I:O:C`` (text only): the plan, then the speed ``servekit perf`` predicts
    for the same selection at that workload."""
    from servekit.errors import SelectionError

    if opts.output_format != "text" or not opts.model or not opts.hardware or opts.batch:
        raise SelectionError("--workload without --slo adds the predicted speed to a text plan of MODEL on --hardware",
                             fix="for JSON use servekit perf MODEL --hardware HW --format json")
    from servekit.app.fit import FitOptions
    from servekit.app.perf import PerfOptions, run_perf
    from servekit.app.slo import parse_workload
    from servekit.cli.perf_cmd import render_text

    load = parse_workload(workload)
    code = plan_command(opts)
    fit = FitOptions(model=opts.model, hardware=opts.hardware, variant=opts.variant, strategy=opts.strategy,
                     nodes=opts.nodes or 1, engine=opts.engine, catalog=opts.catalog)
    try:
        lines = render_text(run_perf(PerfOptions(fit, load))).splitlines()
    except SelectionError as exc:
        lines = [f"none: {exc}"]
    print(f"\n# expected performance at input:output:concurrency {workload} (servekit perf):")
    print("\n".join(f"#   {line.strip()}" for line in lines))
    return code


def plan_command(opts: PlanOptions) -> int:
    """Plan and print one plan (or a batch); returns the exit code."""
    from servekit.errors import SelectionError

    _ignored_options(opts)
    if opts.batch is not None:
        return batch_command(opts.batch, opts.catalog)
    if not opts.model:
        raise SelectionError("name a MODEL (a recipe id such as Qwen/Qwen3.8-27B) or pass --batch FILE")
    from servekit.app.overridden import plan_with_overrides

    return print_plan(plan_with_overrides(plan_request(opts), plan_overrides(opts)), opts)


def print_plan(result, opts: PlanOptions) -> int:
    """Print one planned result in the form ``opts`` asks for; the exit code of ``servekit plan``."""
    import dataclasses

    from servekit.app.plan_view import CANNOT_START, engine_errors, plan_lines, plan_payload, plan_sh

    if engine_errors(result):
        result = dataclasses.replace(result, checks=None)  # a plan that cannot run has no fit to show
    if opts.output_format == "k8s":
        if _k8s(result.plan, opts):
            return 1
    elif opts.output_format == "json":
        sys.stdout.write(json.dumps(plan_payload(result, opts.vllm_version), indent=2, ensure_ascii=False) + "\n")
    elif opts.output_format == "sh":
        sys.stdout.write(plan_sh(result, docker=opts.docker, version=opts.vllm_version))
    else:
        _print_lines(plan_lines(result, docker=opts.docker, version=opts.vllm_version))
    if _engine_error(result):
        return 1
    if not result.can_start:
        sys.stderr.write(f"error: {CANNOT_START}\n")
        return 1
    return 0 if result.valid else 1


def _k8s(plan, opts: PlanOptions) -> int:
    """Print the Kubernetes documents; their error findings on stderr too (the exit code is 1 then)."""
    from servekit.app.k8s_plan import plan_k8s_text, plan_manifests
    from servekit.k8s.cli_glue import options_from_cli
    from servekit.warm.hub import HubSettings

    k8s_options = options_from_cli(opts.namespace, opts.name, opts.storage_class, opts.cache_size)
    manifests = plan_manifests(plan, k8s_options, settings=HubSettings.from_env(), catalog=opts.catalog)
    sys.stdout.write(plan_k8s_text(manifests, plan))
    for finding in manifests.errors:
        sys.stderr.write(f"{finding}\n")
    return len(manifests.errors)


def _print_lines(lines: list[str]) -> None:
    if not sys.stdout.isatty():
        sys.stdout.write("".join(line + "\n" for line in lines))
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    for line in lines:
        if line.startswith("#") and "<-" in line:
            command, _, reason = line.partition("<-")
            console.print(f"[cyan]{escape(command)}[/][dim]<-{escape(reason)}[/]")
        elif line.startswith("#"):
            console.print(f"[bold cyan]{escape(line)}[/]")
        else:
            console.print(escape(line))


_FORMAT_HELP = ("text (a script to read and paste), sh (one POSIX script: `sh plan.sh install`, then "
                "`sh plan.sh RANK` on each machine), json (for programs) or k8s (YAML for kubectl apply -f -).")


OVERRIDE_OPTIONS = {
    "max_model_len": typer.Option(None, "--max-model-len", help="Override: context length (e.g. 8192)."),
    "tp": typer.Option(None, "--tp", help="Override: tensor-parallel size (all ranks; a model without a recipe "
                                          "is laid out with it)."),
    "pp": typer.Option(None, "--pp", help="Override: pipeline-parallel size (stages; with --nodes, across nodes)."),
    "port": typer.Option(None, "--port", help="Override: the port the server listens on."),
    "gpu_memory_utilization": typer.Option(
        None, "--gpu-memory-utilization", help="Override: fraction of GPU memory vLLM may use, above 0 and at most 1."),
    "image": typer.Option(None, "--image", help="Override: the container image (REPOSITORY:TAG)."),
    "vllm_version": typer.Option(
        None, "--vllm-version", help="Pin the engine version: the install steps and the image tag."),
    "docker": typer.Option(False, "--docker", help="Show the docker form: docker pull, then docker run."),
}


def register(app: typer.Typer) -> None:
    from servekit.app.engine_choice import engine_help

    @app.command("plan")
    def _plan(
        model: str | None = typer.Argument(None, help="Recipe id (e.g. Qwen/Qwen3.8-27B) or a variant's checkpoint id."),
        hardware: str | None = typer.Option(
            None, "--hardware", help="Hardware profile id (`servekit list hardware`), or local (this machine)."),
        variant: str | None = typer.Option(None, "--variant", help="Variant key (default: default)."),
        strategy: str | None = typer.Option(None, "--strategy", help="Serving strategy (default: recommended)."),
        nodes: int | None = typer.Option(None, "--nodes", help="Node count (default: the strategy's; 1 for a model "
                                                               "no recipe names)."),
        feature: list[str] = typer.Option([], "--feature", help="Enable a feature (repeatable)."),
        no_feature: list[str] = typer.Option([], "--no-feature", help="Disable a feature (repeatable)."),
        mode: list[str] = typer.Option([], "--mode", help="FEATURE=MODE for a feature with modes (repeatable)."),
        kv_offload: str | None = typer.Option(None, "--kv-offload", help="KV offload option or kv-store deployment."),
        engine: str = typer.Option("vllm", "--engine", help=engine_help("Engine to plan for: ")),
        catalog: str | None = typer.Option(None, "--catalog", help="Catalog directory (default: bundled)."),
        output_format: str = typer.Option("text", "--format", help=_FORMAT_HELP),
        batch: str | None = typer.Option(None, "--batch", help="JSONL file of selections ('-' = stdin)."),
        task: str | None = typer.Option(None, "--task", help="vLLM-Omni task key (omni recipes; default: first)."),
        checks: bool | None = typer.Option(None, "--checks/--no-checks",
                                           help="Fit checks (default: on; --no-checks leaves them out)."),
        target: str | None = typer.Option(None, "--target", help="MAX compile target, e.g. cuda:sm_90 or auto."),
        qaic_mode: str | None = typer.Option(None, "--qaic-mode", help="QAIC: aot (compile first) or pyt."),
        devices: str | None = typer.Option(None, "--devices", help="Device ids for MAX/QAIC, e.g. 0,1 (or cpu)."),
        namespace: str | None = typer.Option(None, "--namespace", help="k8s: namespace (default: default)."),
        name: str | None = typer.Option(None, "--name", help="k8s: base name of the objects (default: the model)."),
        storage_class: str | None = typer.Option(None, "--storage-class", help="k8s: StorageClass of the cache claim."),
        cache_size: str | None = typer.Option(None, "--cache-size", help="k8s: cache claim size (default: 500Gi)."),
        max_model_len: str | None = OVERRIDE_OPTIONS["max_model_len"],
        tp: int | None = OVERRIDE_OPTIONS["tp"],
        pp: int | None = OVERRIDE_OPTIONS["pp"],
        port: int | None = OVERRIDE_OPTIONS["port"],
        gpu_memory_utilization: float | None = OVERRIDE_OPTIONS["gpu_memory_utilization"],
        image: str | None = OVERRIDE_OPTIONS["image"],
        vllm_version: str | None = OVERRIDE_OPTIONS["vllm_version"],
        docker: bool = OVERRIDE_OPTIONS["docker"],
        slo: str | None = typer.Option(None, "--slo", help="Latency targets, e.g. ttft_ms=500,tpot_ms=50: search "
                                       "the layouts for the fewest devices that meet them (with --workload)."),
        workload: str | None = typer.Option(None, "--workload", help="INPUT:OUTPUT:CONCURRENCY for --slo, e.g. "
                                            "1024:1024:64."),
    ) -> None:
        """Plan a deployment: the exact commands, env, image, install steps and why."""
        from servekit.errors import SelectionError

        if output_format not in FORMATS:
            raise SelectionError(f"unknown format {output_format!r}; valid choices: {', '.join(FORMATS)}")
        if slo is not None:
            raise typer.Exit(slo_command(model, hardware, variant, engine, catalog, slo, workload, output_format))
        opts = PlanOptions(model, hardware, variant, strategy, nodes, list(feature), list(no_feature),
                           list(mode), kv_offload, engine, catalog, output_format, batch, task, checks,
                           target, qaic_mode, devices, namespace, name, storage_class, cache_size, docker,
                           max_model_len, tp, port, gpu_memory_utilization, image, vllm_version, pp)
        if workload is not None:
            raise typer.Exit(plan_with_performance(opts, workload))
        raise typer.Exit(plan_command(opts))
