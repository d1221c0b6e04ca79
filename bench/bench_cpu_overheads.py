"""The CPU backend's overhead constants: fitted on real loads of a tiny model on this machine.

Usage: SERVEKIT_ENGINES_DIR=... python bench/bench_cpu_overheads.py [--run RUN] [--write]

Starts the small Llama of ``servekit.perf.constants.CPU_CALIBRATION`` with ``servekit up`` on vLLM
CPU (the installed environment; ``--run``: a run of it already up), runs ``vllm bench serve``
(``servekit.launch.bench_serve``) for each calibration workload (``CALIBRATION``) and each
evaluation workload (``EVALUATION``, never fitted on), and fits the ``*.vllm_cpu`` constants
(``servekit.perf.constants.CPU_CONSTANTS``: the shares of the measured bandwidth and FLOP/s, the
step, per-sequence and per-request overheads) by coordinate descent over their grids (the loss of
``servekit.perf.calibrate``: the mean |ln(predicted / measured)| of output throughput, median
TTFT and median TPOT). Prints the machine's measured CPU row, the fitted values (to be copied into
``servekit.perf.constants``), each point's measured and predicted figures, the errors of the
evaluation points, and leave-one-out over the calibration points. ``--write`` also writes the
report to bench/results/cpu-overheads-DATE.txt.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import io
import json
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

from servekit.app.bench import bench_program, run_launch  # noqa: E402
from servekit.atomic import write_bytes_atomic  # noqa: E402
from servekit.cli.app import main  # noqa: E402
from servekit.launch import records  # noqa: E402
from servekit.launch.bench_serve import Measured, bench_argv, run_load  # noqa: E402
from servekit.launch.launch_plan import plan_from_dict  # noqa: E402
from servekit.perf.calibrate import descend  # noqa: E402
from servekit.perf.constants import CPU_CONSTANTS  # noqa: E402
from servekit.perf.local_cpu import cache_file  # noqa: E402
from servekit.perf.predict import PerfLaunch, Workload, predict  # noqa: E402
from testing.tiny_model import TinyLlamaShape, write_tiny_llama  # noqa: E402

SHAPE = TinyLlamaShape(layers=4, hidden=1024, heads=8, kv_heads=8, head_dim=128, intermediate=2816)
CALIBRATION = (Workload(128, 64, 1, None, 40), Workload(128, 64, 16, None, 40), Workload(512, 32, 2, None, 40))
EVALUATION = (Workload(256, 128, 4, None, 40), Workload(64, 256, 8, None, 40))
ROUNDS = 6


def rates_with(launch: PerfLaunch, values: dict[str, float]) -> PerfLaunch:
    """``launch`` with the CPU constants ``values`` in place of the stored ones."""
    stored = {c.id: c.value for c in CPU_CONSTANTS}
    memory = values["bandwidth_fraction.vllm_cpu"] / stored["bandwidth_fraction.vllm_cpu"]
    flops = values["flops_fraction.vllm_cpu"] / stored["flops_fraction.vllm_cpu"]
    rates = dataclasses.replace(launch.rates, memory=launch.rates.memory * memory, flops=launch.rates.flops * flops,
                                expert_flops=launch.rates.expert_flops * flops,
                                step_s=values["step_overhead_ms.vllm_cpu"] * 1e-3,
                                seq_s=values["seq_overhead_us.vllm_cpu"] * 1e-6,
                                request_s=values["request_overhead_ms.vllm_cpu"] * 1e-3)
    return dataclasses.replace(launch, rates=rates)


def figures_of(launch: PerfLaunch, load: Workload, values: dict[str, float]) -> dict[str, float]:
    pred = predict(rates_with(launch, values), load)
    return {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms": pred.ttft_ms, "tpot_ms": pred.tpot_ms}


def measured_of(m: Measured) -> dict[str, float]:
    return {"output_throughput_tok_s": m.output_throughput_tok_s, "ttft_ms": m.ttft_ms["median"],
            "tpot_ms": m.tpot_ms["median"]}


def errors(launch, load, measured, values) -> dict[str, float]:
    got = figures_of(launch, load, values)
    return {k: abs(math.log(got[k] / v)) for k, v in measured.items() if v > 0}


def loss(launch, points, values) -> float:
    return statistics.fmean(statistics.fmean(errors(launch, load, m, values).values()) for load, m in points)


def fit(launch, points) -> dict[str, float]:
    return descend(CPU_CONSTANTS, {c.id: c.value for c in CPU_CONSTANTS}, lambda values: loss(launch, points, values),
                   ROUNDS)


def up_model(folder: Path) -> str:
    model = write_tiny_llama(folder / "small", shape=SHAPE, dtype="bfloat16")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["up", str(model), "--kv-cache-space", "1", "--max-model-len", "1024", "--detach",
                     "--format", "json"])
    if code != 0:
        raise SystemExit(f"servekit up failed ({code}): {out.getvalue()[-2000:]}")
    return json.loads(out.getvalue().strip().splitlines()[-1])["run"]


def load_once(record, plan, load: Workload, n: int) -> Measured:
    result = record.folder / "bench" / f"cal-{n}.json"
    result.parent.mkdir(parents=True, exist_ok=True)
    argv = bench_argv(bench_program(record), record.url, record.served_name, plan.model, load, result)
    return run_load(argv, {}, result, 900)[0]


def row(name: str, load: Workload, measured: dict, predicted: dict) -> str:
    cells = "  ".join(f"{k.split('_')[0] if k != 'output_throughput_tok_s' else 'tok/s'} {measured[k]:9.2f} / "
                      f"{predicted[k]:9.2f}" for k in measured)
    return f"  {name:5} {load.input_len}:{load.output_len} c={load.concurrency}:  {cells}  (measured / predicted)"


def report(launch, cal, ev, values) -> None:
    print("fitted:", json.dumps(values))
    print("calibration points (fitted on):")
    for load, m in cal:
        print(row("cal", load, m, figures_of(launch, load, values)))
    print("evaluation points (not fitted on):")
    for load, m in ev:
        print(row("eval", load, m, figures_of(launch, load, values)))
        print("        |error| " + ", ".join(f"{k} {math.expm1(e) * 100:.0f}%" for k, e in
                                             errors(launch, load, m, values).items()))
    print("leave-one-out over the calibration points:")
    for i, (load, m) in enumerate(cal):
        refit = fit(launch, [p for j, p in enumerate(cal) if j != i])
        print(f"  without {load.input_len}:{load.output_len} c={load.concurrency}: {json.dumps(refit)}; its |error| "
              + ", ".join(f"{k} {math.expm1(e) * 100:.0f}%" for k, e in errors(launch, load, m, refit).items()))


def run(existing: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_id = existing or up_model(Path(tmp))
        try:
            record = records.load(run_id)
            plan = plan_from_dict(record.plan)
            launch, context, _ = run_launch(record, plan)
            print(f"machine: {json.loads(cache_file().read_text())['machine']}; load averages {os.getloadavg()}")
            print(f"CPU row: {launch.rates.memory / 1e9:.1f} GB/s, {launch.rates.flops / 1e12:.3f} TFLOPS (BF16)")
            cal = [(load, measured_of(load_once(record, plan, load, i))) for i, load in enumerate(CALIBRATION)]
            ev = [(load, measured_of(load_once(record, plan, load, 10 + i))) for i, load in enumerate(EVALUATION)]
            print(f"load averages after the loads: {os.getloadavg()}")
            report(launch, cal, ev, fit(launch, cal))
        finally:
            if existing is None:
                with redirect_stdout(io.StringIO()):
                    main(["down", run_id])


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a run of the calibration model already started by `servekit up`")
    parser.add_argument("--write", action="store_true", help="also write bench/results/cpu-overheads-DATE.txt")
    args = parser.parse_args()
    out = io.StringIO()
    with redirect_stdout(out):
        run(args.run)
    print(out.getvalue(), end="")
    if args.write:
        path = REPO / "bench" / "results" / f"cpu-overheads-{datetime.date.today().isoformat()}.txt"
        write_bytes_atomic(path, out.getvalue().encode())
        print(f"written: {path}")


if __name__ == "__main__":
    cli()
