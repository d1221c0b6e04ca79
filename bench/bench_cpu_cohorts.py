"""Closed loops whose prompts do not fit one step: the cohort rule against measured loads.

A closed loop of ``C`` clients sending fixed-length requests runs in waves when the ``C`` prompts
fit one step's ``max_num_batched_tokens``, and in cohorts when they do not (``servekit.perf.predict``,
"Lockstep" and "Cohorts"). This script measures such loads on a vLLM CPU server of the calibration
model (``servekit.perf.constants.CPU_CALIBRATION``) started with a small budget
(``--max-num-batched-tokens 512``, ``--max-num-seqs 64``), each with ``vllm bench serve`` just after
measuring the CPU again (as ``servekit bench`` does), and prints the median TTFT and TPOT and the
throughput against two predictions from the same launch and CPU row: the cohort rule (what
servekit predicts: the loop replayed step by step as vLLM's scheduler takes it, chunked prefill
included) and, as the baseline, the continuous rule the model gives the same load when its
lengths are a dataset's means (``Workload.fixed_lengths`` off). No constant is fitted on these
loads (none is in the CPU calibration set).

    SERVEKIT_ENGINES_DIR=... python bench/bench_cpu_cohorts.py [--write]

``--write`` also writes the report to bench/results/cpu-cohorts-<date>.txt.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
import os
import statistics
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from bench_cpu_overheads import Point, at, measure_point, run_cli, up_model, write_stamped  # noqa: E402

from servekit.cli.app import main  # noqa: E402
from servekit.launch import records  # noqa: E402
from servekit.launch.launch_plan import plan_from_dict  # noqa: E402
from servekit.perf.predict import Workload, cohort_size, predict  # noqa: E402

BUDGET = 512
SERVER_ARGS = (f"--max-num-batched-tokens={BUDGET}", "--max-num-seqs=64")
LOADS = (Workload(128, 32, 16, None, 64, True), Workload(256, 32, 8, None, 32, True),
         Workload(128, 32, 8, None, 32, True), Workload(64, 32, 16, None, 64, True))
"""Prompts of 16 x 128, 8 x 256, 8 x 128 and 16 x 64 tokens: each more than the 512-token budget
holds at once."""
SHORT = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "output_throughput_tok_s": "tok/s"}


def _figures(point: Point, continuous: bool) -> dict[str, float]:
    load = dataclasses.replace(point.load, fixed_lengths=not continuous)
    pred = predict(at(point.launch, point.row), load)
    return {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms": pred.ttft_ms, "tpot_ms": pred.tpot_ms}


def _line(point: Point) -> tuple[str, dict[str, tuple[float, float]]]:
    load = point.load
    cohort, continuous = _figures(point, False), _figures(point, True)
    k = cohort_size(point.launch, load, load.concurrency)
    ratios = {name: (cohort[name] / v, continuous[name] / v) for name, v in point.measured.items()}
    cells = [f"{SHORT[n]} {point.measured[n]:.1f} / {cohort[n]:.1f} ({ratios[n][0]:.2f}) / {continuous[n]:.1f} "
             f"({ratios[n][1]:.2f})" for n in point.measured]
    return (f"{load.input_len}:{load.output_len} c={load.concurrency}, cohorts of {k}: " + "; ".join(cells)), ratios


def run() -> str:
    lines = [f"server: {' '.join(SERVER_ARGS)}; each figure: measured / cohort rule (ratio) / continuous rule (ratio)"]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        run_id = up_model(Path(tmp), extra=SERVER_ARGS)
        try:
            record = records.load(run_id)
            plan = plan_from_dict(record.plan)
            for n, load in enumerate(LOADS):
                line, got = _line(measure_point(record, plan, load, 30 + n))
                lines.append(line)
                ratios.append(got)
                print(line, flush=True)
        finally:
            with redirect_stdout(io.StringIO()):
                main(["down", run_id])
    for name, short in SHORT.items():
        cohort = statistics.median(abs(math.log(r[name][0])) for r in ratios)
        continuous = statistics.median(abs(math.log(r[name][1])) for r in ratios)
        lines.append(f"median |ln(predicted / measured)| {short}: cohort rule {cohort:.3f}, continuous rule "
                     f"{continuous:.3f}")
    return "\n".join(lines)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="also write bench/results/cpu-cohorts-<date>.txt")
    args = parser.parse_args()
    if not os.environ.get("SERVEKIT_ENGINES_DIR"):
        print("note: SERVEKIT_ENGINES_DIR is not set; the engines are looked for in the default folder",
              file=sys.stderr)
    text = run()
    print(text.split("\n", 1)[0])
    print("\n".join(text.splitlines()[len(LOADS) + 1:]))
    if args.write:
        print(f"written: {write_stamped('cpu-cohorts', text + chr(10))}")


if __name__ == "__main__":
    run_cli(cli)
