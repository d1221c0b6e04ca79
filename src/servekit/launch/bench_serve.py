"""A real load against a running server: vLLM's own ``vllm bench serve``, from the run's engine
environment, and the figures of the result file it saves (``--save-result``; the JSON's fields,
never its printed table).

The load is the random dataset (``--dataset-name random``) of ``input_len`` prompt tokens and
``output_len`` generated tokens per request (``--ignore-eos``: every request generates all of
them, as the prediction assumes), ``num_prompts`` measured requests after unmeasured warm-up ones
(``warmups_for``), either ``concurrency`` requests in
flight (a closed loop: ``--max-concurrency`` with every request ready at once) or a Poisson
``request_rate``. Percentiles asked for: 10, 50, 90 and 99 of TTFT, TPOT, ITL and end-to-end
latency (vllm/benchmarks/serve.py writes them as ``p<N>_<metric>_ms``). ``--save-detailed`` keeps
each request's own figures in the result (``start_times``, ``ttfts``, ``latencies``, ``input_lens``,
``output_lens``, ``itls``; seconds), which ``per_request`` reads: the evidence of which requests
made a percentile, where the figures alone cannot tell. A closed loop of them runs in waves
(``servekit.perf.predict``, lockstep); ``wave_spread`` sets the slowest wave against the median
one, which is how far such a load's p99 TTFT lies from its typical wave.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from servekit.errors import ServekitError
from servekit.perf.predict import Workload
from servekit.records import record

PERCENTILES = "10,50,90,99"
PERCENTILE_METRICS = "ttft,tpot,itl,e2el"
TAIL_CHARS = 3000


class BenchToolError(ServekitError):
    """The load tool failed, or left no result servekit can read."""


@record
class Measured:
    """What one load measured (times in ms, throughput in generated tokens per second)."""

    output_throughput_tok_s: float
    ttft_ms: dict[str, float]
    tpot_ms: dict[str, float]
    completed: int
    failed: int
    duration_s: float
    total_input_tokens: int
    total_output_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def warmups_for(load: Workload) -> int:
    """Warm-up requests before the measured ones: two rounds of the load's concurrency (8 for a
    request rate). A server's first requests after start-up run slower than later ones (on the
    vLLM CPU server of the calibration, the first 256:128 load at concurrency 4 measured a median
    TTFT of 192 ms, a later one of the same workload 82 ms), and the CPU constants were fitted on
    loads of a warm server."""
    return 2 * load.concurrency if load.concurrency is not None else 8


def bench_argv(program: Path, url: str, served_name: str, tokenizer: str, load: Workload,
               result: Path, seed: int = 0, warmups: int | None = None) -> list[str]:
    """The ``vllm bench serve`` command for ``load`` against ``url``, saving to ``result``; ``seed``
    seeds the random prompts; ``warmups`` requests (default ``warmups_for``) run first, unmeasured."""
    argv = [str(program), "bench", "serve", "--backend", "openai", "--base-url", url, "--endpoint", "/v1/completions",
            "--model", served_name, "--tokenizer", tokenizer, "--dataset-name", "random",
            "--random-input-len", str(load.input_len), "--random-output-len", str(load.output_len),
            "--num-prompts", str(load.num_prompts), "--ignore-eos", "--seed", str(seed),
            "--num-warmups", str(warmups_for(load) if warmups is None else warmups),
            "--percentile-metrics", PERCENTILE_METRICS, "--metric-percentiles", PERCENTILES, "--disable-tqdm",
            "--save-result", "--save-detailed", "--result-dir", str(result.parent), "--result-filename", result.name]
    if load.concurrency is not None:
        argv += ["--max-concurrency", str(load.concurrency)]
    if load.request_rate is not None:
        argv += ["--request-rate", str(load.request_rate)]
    return argv


def _number(doc: Mapping[str, Any], key: str, source: str) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BenchToolError(f"{source}: the result has no number {key!r} (found {value!r})",
                             fix="run the load with the engine environment's own `vllm bench serve`")
    return float(value)


def parse_result(doc: Mapping[str, Any], source: str) -> Measured:
    """The figures of a ``--save-result`` JSON object; ``source`` names it in errors."""
    completed = int(_number(doc, "completed", source))
    if completed < 1:
        failed = doc.get("failed")
        raise BenchToolError(f"{source}: no request completed ({failed} failed)",
                             fix="see the server's log (servekit logs RUN)")
    stats = {metric: {"median": _number(doc, f"median_{metric}_ms", source),
                      "p99": _number(doc, f"p99_{metric}_ms", source)} for metric in ("ttft", "tpot")}
    return Measured(
        output_throughput_tok_s=_number(doc, "output_throughput", source),
        ttft_ms=stats["ttft"], tpot_ms=stats["tpot"], completed=completed,
        failed=int(doc.get("failed") or 0), duration_s=_number(doc, "duration", source),
        total_input_tokens=int(_number(doc, "total_input_tokens", source)),
        total_output_tokens=int(_number(doc, "total_output_tokens", source)),
    )


def per_request(doc: Mapping[str, Any]) -> list[dict[str, float]] | None:
    """One row per request of a ``--save-detailed`` result, in the order the tool lists them:
    ``start_s`` (its start, seconds after the load's first), ``ttft_ms``, ``latency_s`` (to its
    last token), ``input_tokens``, ``output_tokens`` and ``ok`` (false where the tool recorded an
    error for it: its times are then zero). None when the result holds no per-request
    lists (saved without ``--save-detailed``) or lists of unequal lengths."""
    keys = ("start_times", "ttfts", "latencies", "input_lens", "output_lens")
    lists = [doc.get(k) for k in keys]
    if not all(isinstance(v, list) for v in lists) or len({len(v) for v in lists}) != 1 or not lists[0]:
        return None
    starts, ttfts, latencies, inputs, outputs = lists
    numbers = [x for v in (starts, ttfts, latencies) for x in v]
    if any(isinstance(x, bool) or not isinstance(x, int | float) for x in numbers):
        return None
    errors = doc.get("errors")
    failed = [bool(e) for e in errors] if isinstance(errors, list) and len(errors) == len(starts) else \
        [False] * len(starts)
    first = min(starts)
    return [{"start_s": round(start - first, 4), "ttft_ms": round(ttft * 1e3, 3), "latency_s": round(latency, 4),
             "input_tokens": int(inp or 0), "output_tokens": int(out or 0), "ok": not bad}
            for start, ttft, latency, inp, out, bad in zip(starts, ttfts, latencies, inputs, outputs, failed,
                                                          strict=True)]


def waves(requests: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The completed requests of a closed loop grouped into its waves: in order of start, a request
    starting more than half the median request's latency after the previous one opens a new wave
    (a wave's requests start within one prefill step of each other, waves a whole request apart)."""
    ordered = sorted((r for r in requests if r.get("ok")), key=lambda r: float(r["start_s"]))
    if not ordered:
        return []
    gap = statistics.median(float(r["latency_s"]) for r in ordered) / 2
    groups: list[list[Mapping[str, Any]]] = [[ordered[0]]]
    for previous, request in zip(ordered, ordered[1:]):
        if float(request["start_s"]) - float(previous["start_s"]) > gap:
            groups.append([])
        groups[-1].append(request)
    return groups


def wave_spread(requests: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """How a closed loop's waves differ. Per wave, the figure is the median TTFT of all its requests
    but the one with the shortest: that one is prefilled alone, the rest together, and theirs is
    the figure of a load's median and p99 TTFT (requests that start within a millisecond of each
    other reach the engine in an order their starts cannot tell). Returns how many waves, the
    fastest, median and slowest wave's figure, and the slowest over the median
    (``slowest_over_median``); None with fewer than two waves of more than one request."""
    others = [statistics.median(sorted(float(r["ttft_ms"]) for r in wave)[1:]) for wave in waves(requests)
              if len(wave) > 1]
    if len(others) < 2:
        return None
    typical = statistics.median(others)
    together = {"fastest": round(min(others), 3), "median": round(typical, 3), "slowest": round(max(others), 3)}
    return {"waves": len(others), "ttft_ms_prefilled_together": together,
            "slowest_over_median": round(max(others) / typical, 3) if typical else None}


def read_result(path: Path) -> tuple[Measured, dict[str, Any]]:
    """(figures, the whole JSON object) of a saved result."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchToolError(f"the load tool left no result at {path}: {exc}") from None
    except ValueError as exc:
        raise BenchToolError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise BenchToolError(f"{path}: a JSON object was expected, found {type(doc).__name__}")
    return parse_result(doc, str(path)), doc


def tail(text: str, chars: int = TAIL_CHARS) -> str:
    return text[-chars:].strip()


def run_load(argv: Sequence[str], env: Mapping[str, str], result: Path, timeout_s: float) -> tuple[Measured, dict]:
    """Run the tool; its figures, or an error with its stderr's tail."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s,
                              env={**os.environ, **env}, cwd=str(result.parent))
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        raise BenchToolError(f"the load did not finish within {timeout_s:.0f} s; stderr tail:\n{tail(err)}",
                             fix="lower --num-prompts, or raise --timeout") from None
    except OSError as exc:
        raise BenchToolError(f"the load tool cannot start: {exc}") from None
    if done.returncode != 0:
        raise BenchToolError(f"`{Path(argv[0]).name} bench serve` failed (exit {done.returncode}); stderr tail:\n"
                             f"{tail(done.stderr or done.stdout)}")
    return read_result(result)
