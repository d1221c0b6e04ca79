"""``servekit plan`` registered with typer: its options, their help, and the call into
``servekit.cli.plan_run``, where the command itself lives (a plain ``servekit plan`` is parsed
without typer by ``servekit.cli.plan_argv``, which reads the same options)."""

from __future__ import annotations

import json

import typer

from servekit.cli.plan_run import FORMATS, PlanOptions, checked_format, plan_command, plan_request, print_plan, run_plan
from servekit.synthesis.overrides import Overrides

__all__ = ["FORMATS", "OVERRIDE_OPTIONS", "PlanOptions", "plan_command", "plan_request", "print_plan", "register"]


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
        features: list[str] = typer.Option([], "--feature", help="Enable a feature (repeatable)."),
        no_features: list[str] = typer.Option([], "--no-feature", help="Disable a feature (repeatable)."),
        modes: list[str] = typer.Option([], "--mode", help="FEATURE=MODE for a feature with modes (repeatable)."),
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
        checked_format(output_format)
        if slo is not None:
            raise typer.Exit(slo_command(model, hardware, variant, engine, catalog, slo, workload, output_format))
        opts = PlanOptions(model, hardware, variant, strategy, nodes, list(features), list(no_features),
                           list(modes), kv_offload, engine, catalog, output_format, batch, task, checks,
                           target, qaic_mode, devices, namespace, name, storage_class, cache_size, docker,
                           Overrides(max_model_len, tp, port, gpu_memory_utilization, image, vllm_version, pp))
        if workload is not None:
            raise typer.Exit(plan_with_performance(opts, workload))
        raise typer.Exit(run_plan(opts))
