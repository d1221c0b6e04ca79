"""``servekit fit``: will this model start on this hardware, and how big is its KV pool."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer


def points_command(path: str) -> int:
    from servekit.cli.inputs import open_input, write_json_lines
    from servekit.fit.command import predict_points

    with open_input(path, "points file") as handle:
        write_json_lines(predict_points(handle), path, "points file", sort_keys=True)
    return 0


def fit_command(opts, output_format: str) -> int:
    from servekit.fit.command import render_text, run_fit

    check, context = run_fit(opts)
    if output_format == "json":
        print(json.dumps({**context, **check.to_dict()}, indent=2))
    else:
        print(render_text(check, context))
    return 0 if check.ok else 1


def register(app: typer.Typer) -> None:
    @app.command("fit")
    def fit(
        model: Optional[str] = typer.Argument(None, help="recipe id, checkpoint id, local dir or config.json"),
        hardware: Optional[str] = typer.Option(None, "--hardware", help="hardware profile id (taxonomy)"),
        variant: Optional[str] = typer.Option(None, "--variant"),
        strategy: Optional[str] = typer.Option(None, "--strategy", help="serving strategy of the plan (recipe models)"),
        tp: Optional[int] = typer.Option(None, "--tp", "--tensor-parallel-size"),
        pp: Optional[int] = typer.Option(None, "--pp", "--pipeline-parallel-size"),
        max_model_len: Optional[str] = typer.Option(None, "--max-model-len"),
        kv_cache_dtype: Optional[str] = typer.Option(None, "--kv-cache-dtype"),
        gpu_memory_utilization: Optional[float] = typer.Option(None, "--gpu-memory-utilization"),
        max_num_seqs: Optional[int] = typer.Option(None, "--max-num-seqs"),
        engine: str = typer.Option("vllm", "--engine", help="vllm | vllm-cpu | max | vllm-qaic | vllm-ascend"),
        nodes: int = typer.Option(1, "--nodes"),
        cpu_kvcache_space: Optional[float] = typer.Option(None, "--cpu-kvcache-space", help="GiB (VLLM_CPU_KVCACHE_SPACE)"),
        catalog: Optional[str] = typer.Option(None, "--catalog"),
        output_format: str = typer.Option("text", "--format", help="text | json"),
        points: Optional[str] = typer.Option(None, "--points", help="kv-points JSONL file ('-' for stdin)"),
    ) -> None:
        """Plan per-rank memory and the KV pool; report whether the launch can start."""
        from servekit.catalog.faults import recipe_faults
        from servekit.errors import SelectionError
        from servekit.fit.command import FitOptions

        if points:
            sys.exit(points_command(points))
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
