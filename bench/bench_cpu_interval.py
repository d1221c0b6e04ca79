"""How often ``servekit bench`` of a vLLM CPU run lands inside its predicted 80% intervals.

Usage: SERVEKIT_ENGINES_DIR=... python bench/bench_cpu_interval.py [--runs N] [--write]

Each run is what the engine test (tests/launch/test_engine_vllm_cpu_bench.py) does once: a fresh
``servekit up`` of the small Llama of ``servekit.perf.constants.CPU_CALIBRATION`` (prefix caching
off), then ``servekit bench RUN`` of the test's workload (256:128 at concurrency 4, 40 prompts:
none of the calibration workloads), which measures this machine's CPU just before the load and
predicts with those figures. Prints every run's measured and predicted figures, their 80%
intervals, the CPU figures the prediction used and the load averages; then, per figure, how
many runs landed inside and the measured / predicted ratios. Each run also prints how its waves
differ (``servekit.launch.bench_serve.wave_spread`` of the requests the evidence keeps): the
slowest wave's TTFT against the median wave's, which is how far the run's p99 lies from its
typical wave.

This is the measurement of the claim that a bench of a tiny model's run lands inside its
predicted interval. The engine test asserts that ``bench`` runs and records what it measured,
and that each figure lies within a gross-error bound of its prediction; whether it lands inside
an 80% interval is a matter of frequency, one a single timed run cannot assert.

``--write`` also writes the report to bench/results/cpu-interval-DATE.txt and adds each run's
figures as a line of bench/results/cpu-loads.jsonl (the held-out loads the CPU backend's 80%
interval, ``servekit.perf.intervals.CPU_INTERVAL80``, is taken from). A line keeps what was
measured, what servekit predicted that day (``predicted``), the rate the weights were taken to
stream at (``model_gb_s``, the probe's rate for a set of the model's size times the CPU backend's
bandwidth share) and the probe's own figures (``probe_model_gb_s``, ``bf16_tflops``). ``--ratios``
predicts each line again from its probe figures with the stored constants (``repredicted``; the
constants are refitted now and then, and the interval is of the stored ones) and prints the
interval those give by ``servekit.perf.intervals.cpu_interval``.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from bench_cpu_overheads import base_launch, launch_at, run_cli, up_model  # noqa: E402

from servekit.atomic import write_bytes_atomic  # noqa: E402
from servekit.cli.app import main  # noqa: E402
from servekit.launch.bench_serve import wave_spread  # noqa: E402
from servekit.perf.constants import constant  # noqa: E402
from servekit.perf.intervals import CPU_INTERVAL80, cpu_interval  # noqa: E402
from servekit.perf.predict import Workload, predict  # noqa: E402

WORKLOAD = ["--input-len", "256", "--output-len", "128", "--concurrency", "4", "--num-prompts", "40"]
LOAD = Workload(256, 128, 4, None, 40, True)
"""``WORKLOAD`` as the speed model sees it (fixed lengths: ``servekit bench`` sends them)."""
CPU_LOADS = REPO / "bench" / "results" / "cpu-loads.jsonl"
FIGURES = ("output_throughput_tok_s", "ttft_ms.median", "tpot_ms.median", "ttft_ms.p99", "tpot_ms.p99")


def one_run(n: int) -> dict:
    """``servekit bench``'s JSON for one fresh ``up`` of the calibration model."""
    with tempfile.TemporaryDirectory() as tmp:
        run_id = up_model(Path(tmp))
        try:
            out = io.StringIO()
            with redirect_stdout(out):
                code = main(["bench", run_id, *WORKLOAD, "--seed", str(100 + n), "--format", "json"])
            if code != 0:
                raise SystemExit(f"servekit bench failed ({code})")
            return json.loads(out.getvalue())
        finally:
            with redirect_stdout(io.StringIO()):
                main(["down", run_id])


def load_line(doc: dict, when: str) -> dict:
    """A line of ``CPU_LOADS``: the figures measured and predicted (medians and p99), and the CPU
    figures used."""
    ledger = json.loads(Path(doc["evidence"]).read_text())
    speed = ledger["cpu_speed"]["figures"]
    return {"date": when, "source": "bench/bench_cpu_interval.py", "workload": "256:128 c=4",
            "memory_gb_s": round(speed["memory_gb_s"], 2), "bf16_tflops": round(speed["bf16_tflops"], 3),
            "model_gb_s": doc["predicted"]["rates"]["memory_gb_s"],
            "probe_model_gb_s": round(doc["predicted"]["rates"]["memory_gb_s"]
                                      / constant("bandwidth_fraction.vllm_cpu"), 3),
            "load_before": doc["machine_load"]["before"][0],
            "cpu_speed_change": ledger.get("cpu_speed_change"),
            "measured": {k: doc["compared"][k]["measured"] for k in FIGURES},
            "predicted": {k: doc["compared"][k]["predicted"] for k in FIGURES}}


def wave_line(doc: dict) -> str | None:
    """The run's wave spread (``servekit.launch.bench_serve.wave_spread`` of the requests its
    evidence keeps) in a line; None without per-request evidence."""
    requests = json.loads(Path(doc["evidence"]).read_text()).get("requests")
    spread = wave_spread(requests or [])
    if spread is None:
        return None
    together = spread["ttft_ms_prefilled_together"]
    return (f"  waves: {spread['waves']}; TTFT of each wave's requests prefilled together: "
            f"{together['fastest']:.0f} .. {together['slowest']:.0f} ms, median {together['median']:.0f}; "
            f"slowest / median wave {spread['slowest_over_median']:.2f}")


def report(docs: list[dict]) -> str:
    lines = []
    for n, doc in enumerate(docs):
        rates = doc["predicted"]["rates"]
        lines.append(f"run {n + 1}: load averages before {[round(x, 2) for x in doc['machine_load']['before']]}, "
                     f"the model's weights predicted to stream at {rates['memory_gb_s']} GB/s, "
                     f"{rates['tflops']} TFLOPS; measured again after the load: {doc.get('cpu_speed_change')}")
        spread = wave_line(doc)
        if spread:
            lines.append(spread)
        for name, row in doc["compared"].items():
            lines.append(f"  {name:24} measured {row['measured']:9.2f}  predicted {row['predicted']:9.2f}  "
                         f"[{row['interval80'][0]:.2f} .. {row['interval80'][1]:.2f}]  ratio {row['ratio']:.3f}  "
                         f"{'inside' if row['inside'] else 'OUTSIDE'}")
    lines.append(f"inside the 80% interval, of {len(docs)} runs:")
    for name in docs[0]["compared"] if docs else ():
        inside = sum(doc["compared"][name]["inside"] for doc in docs)
        ratios = ", ".join(f"{doc['compared'][name]['ratio']:.2f}" for doc in docs)
        lines.append(f"  {name:24} {inside} / {len(docs)}  (measured / predicted: {ratios})")
    return "\n".join(lines)


def read_loads(path: Path = CPU_LOADS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def repredicted(loads: list[dict]) -> list[dict]:
    """The held-out loads that recorded the CPU figures of their moment (``probe_model_gb_s``,
    ``bf16_tflops``), each predicted again with the stored constants from those figures: a line's
    ``predicted`` is what the constants of its day gave, and the interval is of the stored ones.
    (The first lines recorded no figures and are left out.)"""
    with tempfile.TemporaryDirectory() as tmp:
        base = base_launch(Path(tmp))
    out = []
    for line in loads:
        if not line.get("probe_model_gb_s"):
            continue
        pred = predict(launch_at(base, line), LOAD)
        figures = {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms.median": pred.ttft_ms,
                   "tpot_ms.median": pred.tpot_ms, "ttft_ms.p99": pred.ttft_p99_ms, "tpot_ms.p99": pred.tpot_p99_ms}
        out.append({**line, "predicted": {k: round(v, 3) for k, v in figures.items()}})
    return out


def print_ratios() -> None:
    loads = repredicted(read_loads())
    print(f"{len(loads)} held-out loads in {CPU_LOADS.relative_to(REPO)} with the CPU figures of their moment, "
          "each predicted again with the stored constants")
    ratios = cpu_interval(loads)
    for metric, (lo, hi) in ratios.items():
        print(f"  {metric:24} ({lo:.3f}, {hi:.3f})")
    print("  stored CPU_INTERVAL80 " + ("equals them" if ratios == CPU_INTERVAL80 else
                                        "differs: update servekit.perf.intervals.CPU_INTERVAL80"))


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true",
                        help="write bench/results/cpu-interval-DATE.txt and add the runs to the held-out loads")
    parser.add_argument("--ratios", action="store_true", help="print the interval the held-out loads give, run nothing")
    args = parser.parse_args()
    if args.ratios:
        print_ratios()
        return
    if not os.environ.get("SERVEKIT_ENGINES_DIR"):
        print("note: SERVEKIT_ENGINES_DIR is unset; the engine environment is looked up in servekit's default place")
    docs = []
    for n in range(args.runs):
        docs.append(one_run(n))
        print(report(docs[-1:]).splitlines()[0].replace("run 1", f"run {n + 1}"), flush=True)
    text = report(docs)
    print(text)
    if args.write:
        stamp = datetime.datetime.now(datetime.timezone.utc)
        path = REPO / "bench" / "results" / f"cpu-interval-{stamp:%Y-%m-%d-%H%M}.txt"
        write_bytes_atomic(path, (text + "\n").encode())
        added = "".join(json.dumps(load_line(doc, f"{stamp:%Y-%m-%d %H:%M}")) + "\n" for doc in docs)
        write_bytes_atomic(CPU_LOADS, (CPU_LOADS.read_text() if CPU_LOADS.exists() else "").encode() + added.encode())
        print(f"wrote {path.relative_to(REPO)} and {len(docs)} lines of {CPU_LOADS.relative_to(REPO)}")
        print_ratios()


if __name__ == "__main__":
    run_cli(cli)
