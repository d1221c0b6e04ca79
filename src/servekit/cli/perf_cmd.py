"""``servekit perf``: predicted output tokens/s, TTFT and TPOT of a planned launch, or of measured points."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:
    from servekit.perf.predict import Workload


def points_command(path: str, catalog: str | None) -> int:
    from servekit.app.perf import predict_perf_points
    from servekit.cli.inputs import open_input, write_json_lines

    with open_input(path, "points file") as handle:
        written = write_json_lines(predict_perf_points(handle, catalog), path, "points file")
    return written.exit_code


def check_workload(output_format: str, input_len: int, output_len: int, num_prompts: int,
                   concurrency: int | None, request_rate: float | None) -> Workload:
    """The format and workload options of ``perf`` and ``bench``: a clear error for each bad one;
    the workload (``servekit.app.perf.request_workload``)."""
    from servekit.app.perf import request_workload
    from servekit.errors import SelectionError

    if output_format not in ("text", "json"):
        raise SelectionError(f"unknown --format {output_format!r}", fix="use text or json")
    return request_workload(input_len, output_len, concurrency, request_rate, num_prompts)


def _band(pair: list[float]) -> str:
    return f"[{pair[0]:,.1f} .. {pair[1]:,.1f}]"


def _regime(out: dict) -> str:
    """How the closed loop's requests run, where they run together (``Prediction.regime``)."""
    regime = out.get("regime") or "continuous"
    if regime.startswith("waves"):
        return f"; requests run in {regime} (the prompts of a wave fit one step)"
    if regime.startswith("cohorts"):
        budget = out.get("max_num_batched_tokens")
        return (f"; requests run in {regime} (their prompts overflow one step's "
                f"{budget:,} batched tokens)" if isinstance(budget, int) else f"; requests run in {regime}")
    return ""


def render_text(out: dict) -> str:
    """A prediction for people: throughput, latencies with their 80% intervals, what binds."""
    band = out["interval80"]
    return "\n".join([
        f"{out['model']} on {out['hardware']} ({out['weights_format']}, TP {out['tp']} x PP {out['pp']}, "
        f"{out['devices']} device(s))",
        f"  output throughput {out['output_throughput_tok_s']:,.1f} tok/s "
        f"{_band(band['output_throughput_tok_s'])}, {out['output_throughput_per_device_tok_s']:,.1f} per device",
        f"  TTFT median {out['ttft_ms']['median']:,.1f} ms {_band(band['ttft_ms']['median'])}, "
        f"p99 {out['ttft_ms']['p99']:,.1f} ms {_band(band['ttft_ms']['p99'])}",
        f"  TPOT median {out['tpot_ms']['median']:,.2f} ms {_band(band['tpot_ms']['median'])}, "
        f"p99 {out['tpot_ms']['p99']:,.2f} ms {_band(band['tpot_ms']['p99'])}",
        f"  running batch {out['batch']} (max-num-seqs {out['max_num_seqs']}, KV pool {out['kv_tokens']:,} tokens); "
        f"binding: {out['binding']}" + _regime(out),
        *([f"  per device, achieved: memory {out['rates']['memory_gb_s']:,.1f} GB/s"
           + (f" (routed experts {out['rates']['expert_memory_gb_s']:,.1f})" if "expert_memory_gb_s" in out["rates"]
              else "") + f", {out['rates']['tflops']:,.3f} TFLOPS dense"] if out.get("rates") else []),
        *([f"  achieved as: {out['shares_source']}"] if out.get("shares_source") else []),
        "  step terms (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in out["terms_ms"].items()),
        f"  intervals: 80%, from {out.get('interval80_source') or 'servekit.perf.intervals'} (servekit.perf.intervals)",
    ])


def register(app: typer.Typer) -> None:
    @app.command("perf")
    def perf(
        model: Optional[str] = typer.Argument(None, help="recipe id, checkpoint id, local dir"),
        points: Optional[str] = typer.Option(None, "--points", help="perf-points JSONL file ('-' for stdin)"),
        hardware: Optional[str] = typer.Option(None, "--hardware", help="hardware profile id (taxonomy)"),
        variant: Optional[str] = typer.Option(None, "--variant", help="variant key of the recipe"),
        strategy: Optional[str] = typer.Option(None, "--strategy", help="serving strategy of the plan"),
        tp: Optional[int] = typer.Option(None, "--tp", "--tensor-parallel-size", help="tensor-parallel size"),
        pp: Optional[int] = typer.Option(None, "--pp", "--pipeline-parallel-size", help="pipeline-parallel size"),
        nodes: int = typer.Option(1, "--nodes", help="node count of the launch"),
        max_model_len: Optional[str] = typer.Option(None, "--max-model-len", help="context length, e.g. 8192 or 32k"),
        kv_cache_dtype: Optional[str] = typer.Option(None, "--kv-cache-dtype", help="KV cache dtype"),
        gpu_memory_utilization: Optional[float] = typer.Option(
            None, "--gpu-memory-utilization", help="fraction of device memory the engine may use (default: the engine's; vLLM 0.92 from 0.20, 0.9 before)"),
        max_num_seqs: Optional[int] = typer.Option(None, "--max-num-seqs", help="most sequences served at once"),
        max_num_batched_tokens: Optional[int] = typer.Option(
            None, "--max-num-batched-tokens", help="most tokens per engine step (default: the engine's)"),
        engine: str = typer.Option("vllm", "--engine", help="engine of the launch"),
        catalog: Optional[str] = typer.Option(None, "--catalog", help="catalog directory (default: bundled)"),
        input_len: int = typer.Option(1024, "--input-len", help="prompt tokens per request"),
        output_len: int = typer.Option(1024, "--output-len", help="generated tokens per request"),
        concurrency: Optional[int] = typer.Option(None, "--concurrency", help="requests in flight (closed loop)"),
        request_rate: Optional[float] = typer.Option(None, "--request-rate", help="requests per second (Poisson)"),
        num_prompts: int = typer.Option(1000, "--num-prompts", help="requests of the run (vllm bench serve's default)"),
        acceptance_rate: Optional[float] = typer.Option(None, "--acceptance-rate",
                                                        help="speculative decoding: share of drafted tokens accepted"),
        output_format: str = typer.Option("text", "--format", help="text | json"),
    ) -> None:
        """Predict output tokens/s, TTFT and TPOT (median, p99, 80% intervals) and the binding term."""
        from servekit.catalog.faults import recipe_faults
        from servekit.errors import SelectionError

        if points:
            sys.exit(points_command(points, catalog))
        if not model or not hardware:
            raise SelectionError("servekit perf needs MODEL and --hardware (or --points FILE)")
        workload = check_workload(output_format, input_len, output_len, num_prompts, concurrency, request_rate)
        from servekit.app.fit import FitOptions
        from servekit.app.perf import PerfOptions, run_perf

        fit = FitOptions(model=model, hardware=hardware, variant=variant, strategy=strategy, tp=tp, pp=pp,
                         max_model_len=max_model_len, kv_cache_dtype=kv_cache_dtype,
                         gpu_memory_utilization=gpu_memory_utilization, max_num_seqs=max_num_seqs, engine=engine,
                         nodes=nodes, catalog=catalog)
        with recipe_faults(catalog, model):
            out = run_perf(PerfOptions(fit, workload, max_num_batched_tokens, acceptance_rate))
        print(json.dumps(out, indent=2) if output_format == "json" else render_text(out))
