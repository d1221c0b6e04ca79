"""``servekit bench RUN``: a real load (``vllm bench serve``) against a run ``servekit up``
started, its measured figures against the ``servekit perf`` prediction, recorded as evidence."""

from __future__ import annotations

import json
from typing import Optional

import typer

DEFAULT_CONCURRENCY = 4


def _band(pair: list[float]) -> str:
    return f"[{pair[0]:,.2f} .. {pair[1]:,.2f}]"


def _cache_lines(cache: dict | None) -> list[str]:
    if not cache or cache["hit_tokens"] <= 0:
        return []
    return [f"  prefix cache: {cache['hit_rate']:.0%} of {cache['queried_tokens']:,.0f} prompt tokens were found cached; "
            "the prediction prefills every prompt token, so the measured TTFT is shorter by what it skipped "
            "(to compare like with like: `servekit up MODEL --arg=--no-enable-prefix-caching`)"]


def _drift_lines(change: dict | None) -> list[str]:
    if not change:
        return []
    parts = ", ".join(f"{name} {ratio:.2f}x" for name, ratio in change.items())
    return [f"  this CPU measured again after the load: {parts} of the figures the prediction used"]


def _wave_lines(spread: dict | None) -> list[str]:
    if not spread:
        return []
    together = spread["ttft_ms_prefilled_together"]
    return [f"  waves: {spread['waves']}; TTFT of each wave's requests prefilled together "
            f"{together['fastest']:,.0f} .. {together['slowest']:,.0f} ms (median wave {together['median']:,.0f}); "
            f"the p99 TTFT is the slowest wave's, {spread['slowest_over_median']:.2f}x the median wave's"]


def render_text(doc: dict) -> str:
    """Measured against predicted, figure by figure, for people."""
    load, pred = doc["workload"], doc["predicted"]
    shape = (f"concurrency {load['concurrency']}" if load["concurrency"] is not None
             else f"request rate {load['request_rate']}/s")
    lines = [f"bench {doc['run']}: {doc['model']} ({doc['engine']} {doc['engine_version']}), "
             f"{load['input_len']}:{load['output_len']} tokens, {shape}, {load['num_prompts']} prompts",
             f"  {'figure':28} {'measured':>10} {'predicted':>10}  80% interval"]
    for name, row in doc["compared"].items():
        lines.append(f"  {name:28} {row['measured']:>10,.2f} {row['predicted']:>10,.2f}  {_band(row['interval80'])}  "
                     f"{'inside' if row['inside'] else 'OUTSIDE'}")
    lines += [f"  binding: {doc['binding']} (running batch {pred['batch']}); "
              f"{'every figure inside its interval' if doc['inside'] else 'the prediction misses (see OUTSIDE)'}",
              f"  completed {doc['measured']['completed']}, failed {doc['measured']['failed']}",
              *_cache_lines(doc.get("prefix_cache")),
              *_drift_lines(doc.get("cpu_speed_change")),
              *_wave_lines(doc.get("waves")),
              f"  evidence: {doc['evidence']}"]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("bench")
    def bench(
        run: str = typer.Argument(..., help="Run id (servekit ps) of a run `servekit up` started."),
        input_len: int = typer.Option(256, "--input-len", help="prompt tokens per request"),
        output_len: int = typer.Option(128, "--output-len", help="generated tokens per request"),
        concurrency: Optional[int] = typer.Option(
            None, "--concurrency", help=f"requests in flight (closed loop; default {DEFAULT_CONCURRENCY})"),
        request_rate: Optional[float] = typer.Option(None, "--request-rate", help="requests per second (Poisson)"),
        num_prompts: int = typer.Option(64, "--num-prompts", help="requests of the load"),
        seed: int = typer.Option(0, "--seed", help="seed of the random prompts"),
        warmups: Optional[int] = typer.Option(None, "--num-warmups",
                                              help="unmeasured requests first (default: twice the concurrency)"),
        timeout: float = typer.Option(1800.0, "--timeout", help="seconds the load may take"),
        output_format: str = typer.Option("text", "--format", help="text | json"),
    ) -> None:
        """Load a running server with `vllm bench serve`; measured against predicted, recorded as evidence."""
        from servekit.cli.perf_cmd import check_workload
        from servekit.errors import SelectionError

        if request_rate is None and concurrency is None:
            concurrency = DEFAULT_CONCURRENCY
        load = check_workload(output_format, input_len, output_len, num_prompts, concurrency, request_rate)
        if warmups is not None and warmups < 0:
            raise SelectionError(f"--num-warmups {warmups} must be at least 0")
        from servekit.app.bench import BenchOptions, bench_run

        doc = bench_run(BenchOptions(run, load, seed, timeout, warmups))
        typer.echo(json.dumps(doc, indent=2) if output_format == "json" else render_text(doc))
