"""``servekit fit``: will this model start on this hardware, and how big is its KV pool."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer


def points_command(path: str, strict: bool = False) -> int:
    from servekit.app.fit import predict_points
    from servekit.cli.inputs import open_input, write_json_lines

    with open_input(path, "points file") as handle:
        written = write_json_lines(predict_points(handle, strict=strict), path, "points file", sort_keys=True)
    return written.exit_code


def _report_lines(r) -> list[str]:
    """The memory plan of a ``FitReport``, per rank."""
    state = f", {r.linear_state_bytes_per_seq:,} B/sequence of constant state" if r.linear_state_bytes_per_seq else ""
    added = "".join(f"; {gib:.2f} of them {what}" for what, gib in r.weights_added)
    graphs = f" + CUDA graphs {r.cudagraph_gib:.2f}" if r.cudagraph_gib else ""
    graphs += f" + runner buffers {r.buffers_gib:.2f}" if r.buffers_gib else ""
    return [
        f"  engine {r.engine}, TP {r.tp} x PP {r.pp}, max-model-len {r.max_model_len:,}, "
        f"kv-cache-dtype {r.kv_cache_dtype}",
        *([f"  device memory {r.device_memory_gib:.2f} GiB ({r.device_memory_source})"]
          if r.device_memory_source else []),
        f"  per rank: budget {r.budget_gib:.2f} GiB = weights {r.weights_gib_per_rank:.2f}"
        + (f" + activation {r.activation_gib:.2f}" if r.activation_gib else "")
        + (f" + runtime {r.runtime_gib:.2f}" if r.runtime_gib else "") + f"{graphs} + KV {r.available_kv_gib:.2f} GiB",
        *([f"  weights: {r.weights_gib_per_rank:.2f} GiB per rank as loaded{added}"] if added else []),
        f"  KV: {r.kv_bytes_per_token:,.0f} B/token/rank (attention layers){state}, block {r.block_size} tokens",
        f"  pool {r.kv_tokens:,} tokens; {r.max_concurrency:.2f}x requests of {r.max_model_len:,}; "
        f"longest context that fits {r.longest_context:,}",
    ]


def render_text(check, context: dict) -> str:
    """A fit check for people: the memory plan, every finding with its fix, the verdict."""
    variant = f" (variant {context['variant']})" if context.get("variant") else ""
    lines = [f"{context['model']} on {context['hardware']}{variant}"]
    if check.report is not None:
        lines += _report_lines(check.report)
    for f in check.findings:
        lines.append(f"  {f.severity}: {f.message}" + (f" (fix: {f.fix})" if f.fix else ""))
    lines.append(f"  fits: {'yes' if check.fits else check.verdict}")
    return "\n".join(lines)


def fit_command(opts, output_format: str) -> int:
    from servekit.app.fit import run_fit

    check, context = run_fit(opts)
    if output_format == "json":
        print(json.dumps({**context, **check.to_dict()}, indent=2))
    else:
        print(render_text(check, context))
    return 0 if check.ok else 1


def register(app: typer.Typer) -> None:
    from servekit.fit.planner import engine_choices

    @app.command("fit")
    def fit(
        model: Optional[str] = typer.Argument(None, help="recipe id, checkpoint id, local dir or config.json"),
        hardware: Optional[str] = typer.Option(None, "--hardware", help="hardware profile id (taxonomy)"),
        variant: Optional[str] = typer.Option(None, "--variant", 
            help="variant key of the recipe (default: default)"),
        strategy: Optional[str] = typer.Option(None, "--strategy", help="serving strategy of the plan (recipe models)"),
        tp: Optional[int] = typer.Option(None, "--tp", "--tensor-parallel-size", 
            help="tensor-parallel size (default: the plan's)"),
        pp: Optional[int] = typer.Option(None, "--pp", "--pipeline-parallel-size", 
            help="pipeline-parallel size (default: 1)"),
        max_model_len: Optional[str] = typer.Option(None, "--max-model-len", 
            help="context length, e.g. 8192 or 32k (default: the plan's)"),
        kv_cache_dtype: Optional[str] = typer.Option(None, "--kv-cache-dtype", help="KV cache dtype, e.g. auto or fp8"),
        gpu_memory_utilization: Optional[float] = typer.Option(None, "--gpu-memory-utilization", 
            help="fraction of device memory the engine may use (default: the engine's; vLLM 0.92 from 0.20, 0.9 before)"),
        max_num_seqs: Optional[int] = typer.Option(None, "--max-num-seqs", help="most sequences served at once"),
        engine: str = typer.Option("vllm", "--engine", help=" | ".join(engine_choices())),
        nodes: int = typer.Option(1, "--nodes", help="node count of the launch"),
        cpu_kvcache_space: Optional[float] = typer.Option(None, "--cpu-kvcache-space", help="GiB (VLLM_CPU_KVCACHE_SPACE)"),
        catalog: Optional[str] = typer.Option(None, "--catalog", help="catalog directory (default: bundled)"),
        output_format: str = typer.Option("text", "--format", help="text | json"),
        points: Optional[str] = typer.Option(None, "--points", help="kv-points JSONL file ('-' for stdin)"),
        strict: bool = typer.Option(False, "--strict", help="with --points: a field in no structured form is "
                                    "the line's error (default: set aside, named in the line's set_aside)"),
        every: bool = typer.Option(False, "--all", help="every recipe variant with facts on --hardware"),
        gpus: Optional[int] = typer.Option(None, "--gpus", help="GPUs to use with --all (default: the profile's)"),
        feature: list[str] = typer.Option([], "--feature", help="with --all: only recipes offering this feature"),
    ) -> None:
        """Plan per-rank memory and the KV pool; report whether the launch can start."""
        from servekit.app.fit import FitOptions
        from servekit.catalog.faults import recipe_faults
        from servekit.errors import SelectionError

        if points:
            sys.exit(points_command(points, strict))
        if every:
            from servekit.app.fit_all import FitAllOptions, fit_all, render_rows

            rows = fit_all(FitAllOptions(hardware=hardware or "", gpus=gpus, max_model_len=max_model_len,
                                         feature=tuple(feature), engine=engine, catalog=catalog))
            print(json.dumps(rows, indent=2) if output_format == "json" else render_rows(rows))
            return
        if not model or not hardware:
            raise SelectionError("servekit fit needs MODEL and --hardware (or --points FILE)")
        if output_format not in ("text", "json"):
            raise SelectionError(f"unknown --format {output_format!r}", fix="use text or json")
        opts = FitOptions(
            model=model, hardware=hardware, variant=variant, strategy=strategy, tp=tp, pp=pp, max_model_len=max_model_len,
            kv_cache_dtype=kv_cache_dtype, gpu_memory_utilization=gpu_memory_utilization,
            max_num_seqs=max_num_seqs, engine=engine, nodes=nodes, cpu_kvcache_space_gib=cpu_kvcache_space,
            catalog=catalog,
        )
        with recipe_faults(catalog, model):
            code = fit_command(opts, output_format)
        if code:
            sys.exit(code)
