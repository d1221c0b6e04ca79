"""The CPU backend's overhead constants: fitted on real loads of a tiny model on this machine.

Usage: SERVEKIT_ENGINES_DIR=... python bench/bench_cpu_overheads.py [--run RUN] [--sizes] [--write]

Starts the small Llama of ``servekit.perf.constants.CPU_CALIBRATION`` with ``servekit up`` on vLLM
CPU (the installed environment; ``--run``: a run of it already up), runs ``vllm bench serve``
(``servekit.launch.bench_serve``) for each calibration workload (``CALIBRATION``) and each
evaluation workload (``EVALUATION``, never fitted on), each just after measuring the CPU again
(``servekit.app.bench.measure_cpu_now``, as ``servekit bench`` does: each point is predicted
with the CPU row of its own moment), and fits the ``*.vllm_cpu`` constants
(``servekit.perf.constants.CPU_CONSTANTS``: the shares of the measured bandwidth and FLOP/s, the
step, per-sequence and per-request overheads) by coordinate descent over their grids (the loss of
``servekit.perf.calibrate``: the mean |ln(predicted / measured)| of output throughput, median
TTFT and median TPOT). Prints the machine's measured CPU row, the fitted values (to be copied into
``servekit.perf.constants``), each point's measured and predicted figures, the errors of the
evaluation points, and leave-one-out over the calibration points.

The server runs with prefix caching off (``--no-enable-prefix-caching``): the random dataset of a
model with a vocabulary of a few hundred tokens walks the same token cycle from one of a few
hundred offsets (vllm/benchmarks/datasets/datasets.py, ``generate_token_sequence``), so over the
five loads on one server most prompts would begin like earlier ones and be partly served from
the cache, which the speed model does not count (a fresh server's single load, as the engine
test runs, repeats few). Each load has its own seed. ``--write`` also writes the
report to bench/results/cpu-overheads-DATE-HHMM.txt.

``--write`` also adds each load as a line of bench/results/cpu-calibration-loads.jsonl (its
workload, whether it is fitted on, the CPU figures of its moment and what it measured), and
``--stored`` fits on every calibration line of that file instead of running loads: the calibration
runs of different hours together (a shared machine's speed moves between hours, and constants
fitted at one hour carry that hour's bias), each load predicted with the CPU figures of its own
moment, with the same report and leave-one-out.

``--sizes`` fits nothing: it starts Llamas of other sizes (``OTHER_SIZES``: one the caches hold
whole, one that streams from memory) and scores the stored constants on the first evaluation
workload of each, a test of the rule that reads a model's weights at the rate measured for a set
of its size (none of these models is in the calibration set).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import io
import json
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

from servekit.app.bench import bench_program, measure_cpu_now, run_launch  # noqa: E402
from servekit.app.fit import FitOptions  # noqa: E402
from servekit.app.local_hardware import with_local  # noqa: E402
from servekit.app.perf import PerfOptions, perf_launch  # noqa: E402
from servekit.app.request import load_documents  # noqa: E402
from servekit.atomic import write_bytes_atomic  # noqa: E402
from servekit.errors import ServekitError  # noqa: E402
from servekit.cli.app import main  # noqa: E402
from servekit.hardware import LOCAL, HardwareProfile, profiles_for  # noqa: E402
from servekit.hardware.device_compute import DeviceCompute  # noqa: E402
from servekit.launch import records  # noqa: E402
from servekit.launch.bench_serve import Measured, bench_argv, run_load  # noqa: E402
from servekit.launch.launch_plan import plan_from_dict  # noqa: E402
from servekit.perf.calibrate import descend  # noqa: E402
from servekit.perf.constants import CPU_CONSTANTS  # noqa: E402
from servekit.perf.launch import device_row, rates_for  # noqa: E402
from servekit.perf.local_cpu import cpu_row  # noqa: E402
from servekit.perf.predict import PerfLaunch, Workload, predict  # noqa: E402
from testing.tiny_model import TinyLlamaShape, write_tiny_llama  # noqa: E402

SHAPE = TinyLlamaShape(layers=4, hidden=1024, heads=8, kv_heads=8, head_dim=128, intermediate=2816)
CALIBRATION = (Workload(128, 64, 1, None, 40, True), Workload(128, 64, 16, None, 40, True),
               Workload(512, 32, 2, None, 40, True))
EVALUATION = (Workload(256, 128, 4, None, 40, True), Workload(64, 256, 8, None, 40, True))
ROUNDS = 6
CAL_LOADS = REPO / "bench" / "results" / "cpu-calibration-loads.jsonl"
"""The calibration runs' loads, one JSON line each (``--write`` adds a run's, ``--stored`` fits on them)."""
OTHER_SIZES = (TinyLlamaShape(layers=2, hidden=1024, heads=8, kv_heads=8, head_dim=128, intermediate=2816),
               TinyLlamaShape(layers=4, hidden=1536, heads=12, kv_heads=12, head_dim=128, intermediate=4096))
"""52 MB and 226 MB of BF16 weights, beside the calibration model's 104 MB."""


class Point(NamedTuple):
    """One load: the launch as ``servekit perf`` builds it, the CPU row of the load's moment, the
    workload and what it measured."""

    launch: PerfLaunch
    row: DeviceCompute
    load: Workload
    measured: dict[str, float]


@functools.cache
def local_profile() -> HardwareProfile:
    """Hardware ``local``, this machine, as the planner sees it."""
    return profiles_for(with_local(load_documents(None), LOCAL).taxonomy)[LOCAL]


def at(launch: PerfLaunch, row: DeviceCompute, values: dict[str, float] | None = None) -> PerfLaunch:
    """``launch`` with the rates ``servekit.perf.launch.rates_for`` gives for the CPU row ``row``,
    with the CPU constants ``values`` in place of the stored ones."""
    profile = dataclasses.replace(local_profile(), compute=row)
    ranks = launch.layout.tp * launch.layout.pp
    return dataclasses.replace(launch, rates=rates_for(profile, launch.shape, "vllm", values, ranks))


def figures_of(point: Point, values: dict[str, float]) -> dict[str, float]:
    pred = predict(at(point.launch, point.row, values), point.load)
    return {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms": pred.ttft_ms, "tpot_ms": pred.tpot_ms}


def measured_of(m: Measured) -> dict[str, float]:
    return {"output_throughput_tok_s": m.output_throughput_tok_s, "ttft_ms": m.ttft_ms["median"],
            "tpot_ms": m.tpot_ms["median"]}


def errors(point: Point, values: dict[str, float]) -> dict[str, float]:
    got = figures_of(point, values)
    return {k: abs(math.log(got[k] / v)) for k, v in point.measured.items() if v > 0}


def loss(points: list[Point], values: dict[str, float]) -> float:
    return statistics.fmean(statistics.fmean(errors(point, values).values()) for point in points)


def fit(points: list[Point]) -> dict[str, float]:
    return descend(CPU_CONSTANTS, {c.id: c.value for c in CPU_CONSTANTS}, lambda values: loss(points, values), ROUNDS)


def write_stamped(kind: str, text: str) -> Path:
    """Write a report to bench/results/<kind>-<UTC date and minute>.txt (one file per run)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d-%H%M")
    path = REPO / "bench" / "results" / f"{kind}-{stamp}.txt"
    write_bytes_atomic(path, text.encode())
    return path


def up_model(folder: Path, shape: TinyLlamaShape = SHAPE, extra: tuple[str, ...] = ()) -> str:
    """``servekit up`` of the calibration model (``extra``: more server arguments, each ``--flag=value``)."""
    model = write_tiny_llama(folder / "small", shape=shape, dtype="bfloat16")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["up", str(model), "--kv-cache-space", "1", "--max-model-len", "1024", "--detach",
                     "--arg=--no-enable-prefix-caching", *(f"--arg={a}" for a in extra), "--format", "json"])
    if code != 0:
        raise SystemExit(f"servekit up failed ({code}): {out.getvalue()[-2000:]}")
    return json.loads(out.getvalue().strip().splitlines()[-1])["run"]


def load_once(record, plan, load: Workload, n: int) -> Measured:
    result = record.folder / "bench" / f"cal-{n}.json"
    result.parent.mkdir(parents=True, exist_ok=True)
    argv = bench_argv(bench_program(record), record.url, record.served_name, plan.model, load, result, seed=n)
    return run_load(argv, {}, result, 900)[0]


def row(name: str, load: Workload, measured: dict, predicted: dict) -> str:
    cells = "  ".join(f"{k.split('_')[0] if k != 'output_throughput_tok_s' else 'tok/s'} {measured[k]:9.2f} / "
                      f"{predicted[k]:9.2f}" for k in measured)
    return f"  {name:5} {load.input_len}:{load.output_len} c={load.concurrency}:  {cells}  (measured / predicted)"


def error_line(point: Point, values: dict[str, float]) -> str:
    return ", ".join(f"{k} {math.expm1(e) * 100:.0f}%" for k, e in errors(point, values).items())


def report(cal: list[Point], ev: list[Point], values: dict[str, float]) -> None:
    print("fitted:", json.dumps(values))
    print("calibration points (fitted on):")
    for point in cal:
        print(row("cal", point.load, point.measured, figures_of(point, values)))
    print("evaluation points (not fitted on):")
    for point in ev:
        print(row("eval", point.load, point.measured, figures_of(point, values)))
        print("        |error| " + error_line(point, values))
    print("leave-one-out over the calibration points:")
    for i, point in enumerate(cal):
        refit = fit([p for j, p in enumerate(cal) if j != i])
        load = point.load
        print(f"  without {load.input_len}:{load.output_len} c={load.concurrency}: {json.dumps(refit)}; its |error| "
              + error_line(point, refit))


def measure_point(record, plan, load: Workload, n: int, lines: list[dict] | None = None,
                  role: str = "calibration") -> Point:
    """One load, with the CPU row measured just before it; with ``lines``, its line of
    ``CAL_LOADS`` is added to them."""
    speed = measure_cpu_now(record) or {}
    figures, key = speed.get("figures") or {}, speed.get("machine")
    launch, _, _ = run_launch(record, plan)
    measured = load_once(record, plan, load, n)
    weights = launch.shape.weight_bytes
    cpu = cpu_row(speed) if figures else device_row(local_profile())
    model_rate = cpu.memory_for(weights) if figures else 0.0
    print(f"  {load.input_len}:{load.output_len} c={load.concurrency}: CPU row {figures.get('memory_gb_s', 0):.1f} "
          f"GB/s from memory, {model_rate:.1f} GB/s for the model's {weights / 1e6:.0f} MB of weights, "
          f"{figures.get('bf16_tflops', 0):.3f} TFLOPS BF16 (best {figures.get('best_memory_gb_s', 0):.1f}, "
          f"{figures.get('best_bf16_tflops', 0):.3f}) on CPUs {figures.get('cpus')} of {key}; load averages "
          f"{tuple(round(x, 2) for x in os.getloadavg())} after the load")
    if lines is not None:
        lines.append(load_line(load, role, figures, model_rate, measured_of(measured)))
    return Point(launch, cpu, load, measured_of(measured))


def load_line(load: Workload, role: str, figures: dict, model_rate: float, measured: dict) -> dict:
    """A line of ``CAL_LOADS``."""
    return {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M"),
            "source": "bench/bench_cpu_overheads.py", "role": role,
            "workload": {"input_len": load.input_len, "output_len": load.output_len,
                         "concurrency": load.concurrency, "num_prompts": load.num_prompts},
            "memory_gb_s": round(float(figures.get("memory_gb_s") or 0), 3), "probe_model_gb_s": round(model_rate, 3),
            "bf16_tflops": round(float(figures.get("bf16_tflops") or 0), 4),
            "measured": {k: round(v, 3) for k, v in measured.items()}}


def read_lines(path: Path = CAL_LOADS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def base_launch(folder: Path) -> PerfLaunch:
    """The speed model's launch of the calibration model as ``up_model`` starts it (no server; the
    model reads only the checkpoint's shapes and sizes, so its weights are written as one value)."""
    model = write_tiny_llama(folder / "small", shape=SHAPE, dtype="bfloat16", fill=0.0)
    opts = FitOptions(str(model), "local", max_model_len="1024", cpu_kvcache_space_gib=1.0,
                      extra_args=["--no-enable-prefix-caching"])
    return perf_launch(PerfOptions(opts, EVALUATION[0]))[0]


def row_of(line: dict) -> DeviceCompute:
    """The CPU row of a line's moment: ``probe_model_gb_s``, the rate the probe measured for a set
    of the model's size (the row's rate for every size), and ``bf16_tflops``."""
    return cpu_row({"figures": {"memory_gb_s": line["probe_model_gb_s"], "bf16_tflops": line["bf16_tflops"]}})


def launch_at(base: PerfLaunch, line: dict) -> PerfLaunch:
    """``base`` with the CPU figures of the line's moment and the stored constants."""
    return at(base, row_of(line))


def stored_points(lines: list[dict], base: PerfLaunch, role: str) -> list[Point]:
    out = []
    for line in lines:
        if line["role"] != role:
            continue
        wl = line["workload"]
        load = Workload(wl["input_len"], wl["output_len"], wl["concurrency"], None, wl["num_prompts"], True)
        out.append(Point(base, row_of(line), load, line["measured"]))
    return out


def run_stored() -> None:
    """The fit on every calibration line of ``CAL_LOADS``, scored on its evaluation lines."""
    lines = read_lines()
    print(f"{len(lines)} loads in {CAL_LOADS.relative_to(REPO)}, from "
          + ", ".join(sorted({f"{line['date'][:13]}h ({line['source']})" for line in lines})))
    with tempfile.TemporaryDirectory() as tmp:
        base = base_launch(Path(tmp))
    cal, ev = stored_points(lines, base, "calibration"), stored_points(lines, base, "evaluation")
    report(cal, ev, fit(cal))


def run(existing: str | None) -> list[dict]:
    """The loads' lines of ``CAL_LOADS``."""
    lines: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        run_id = existing or up_model(Path(tmp))
        try:
            record = records.load(run_id)
            plan = plan_from_dict(record.plan)
            print(f"load averages before the loads: {tuple(round(x, 2) for x in os.getloadavg())}")
            cal = [measure_point(record, plan, load, i, lines) for i, load in enumerate(CALIBRATION)]
            ev = [measure_point(record, plan, load, 10 + i, lines, "evaluation") for i, load in enumerate(EVALUATION)]
            report(cal, ev, fit(cal))
        finally:
            if existing is None:
                with redirect_stdout(io.StringIO()):
                    main(["down", run_id])
    return lines


def sizes() -> None:
    """The stored constants on models of other sizes (``OTHER_SIZES``), none fitted on."""
    stored = {c.id: c.value for c in CPU_CONSTANTS}
    load = EVALUATION[0]
    for n, shape in enumerate(OTHER_SIZES):
        with tempfile.TemporaryDirectory() as tmp:
            run_id = up_model(Path(tmp), shape)
            try:
                record = records.load(run_id)
                plan = plan_from_dict(record.plan)
                point = measure_point(record, plan, load, 20 + n)
                print(row(f"L{shape.layers}h{shape.hidden}", load, point.measured, figures_of(point, stored)))
                print("        |error| " + error_line(point, stored))
            finally:
                with redirect_stdout(io.StringIO()):
                    main(["down", run_id])


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a run of the calibration model already started by `servekit up`")
    parser.add_argument("--sizes", action="store_true",
                        help="score the stored constants on models of other sizes instead of fitting")
    parser.add_argument("--stored", action="store_true",
                        help=f"fit on the calibration lines of {CAL_LOADS.name} instead of running loads")
    parser.add_argument("--write", action="store_true",
                        help="also write bench/results/cpu-overheads-DATE-HHMM.txt (and add the loads to "
                             f"{CAL_LOADS.name})")
    args = parser.parse_args()
    out = io.StringIO()
    lines: list[dict] = []
    with redirect_stdout(out):
        if args.sizes:
            sizes()
        elif args.stored:
            run_stored()
        else:
            lines = run(args.run)
    print(out.getvalue(), end="")
    if args.write:
        kind = "cpu-sizes" if args.sizes else "cpu-overheads-stored" if args.stored else "cpu-overheads"
        path = write_stamped(kind, out.getvalue())
        print(f"written: {path}")
        if lines:
            old = CAL_LOADS.read_bytes() if CAL_LOADS.is_file() else b""
            write_bytes_atomic(CAL_LOADS, old + "".join(json.dumps(x) + "\n" for x in lines).encode())
            print(f"added {len(lines)} loads to {CAL_LOADS}")


def run_cli(cli: Callable[[], None]) -> None:
    """Run a bench script's ``cli``; a problem the user can fix is its one line, no traceback."""
    try:
        cli()
    except ServekitError as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    run_cli(cli)
