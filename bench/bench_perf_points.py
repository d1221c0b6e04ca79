"""Accuracy of servekit's speed predictions against measured serving runs.

Usage: python bench/bench_perf_points.py [POINTS.jsonl] [--table FILE] [--loo] [--groups] [--starts] [--write]

Reads perf-points lines (default: ../shared/reference/perf-points-visible.jsonl beside the repo),
and TensorRT-LLM's published throughput table (``--table``, default
bench/data/trtllm-perf-overview-v1.0.jsonl), predicts each from its structured fields
(``servekit.perf.points``; the measured figures are read only to score) and prints the calibration
set (``servekit.perf.constants.CALIBRATION_POINTS`` and the table's calibration half,
``servekit.perf.calibrate.calibration_half``, on which the fitted constants were fitted, the two
sources weighing the same) and the evaluation set (every other point of each file) apart:
median |relative error| of output throughput, TPOT and TTFT, and the share of measurements inside
the 80% interval, overall, per engine release and device, per model kind (dense, MoE, MLA) and
per regime (offline, closed-loop concurrency, request rate). ``--loo`` refits the constants once per
calibration point left out (coordinate descent from the stored values, two rounds; one process per
CPU) and prints
each constant's range, the held-out points' errors and the 80% interval ratios those errors alone
give (for comparison; the stored ones pool more, ``--groups``).
``--groups`` leaves every calibration point of one model (by shape,
``servekit.perf.calibrate.model_group``) out together, refits, and prints the held-out errors; then
the 80% interval ratios the rule of ``servekit.perf.intervals`` gives over every source's
out-of-sample errors (those held-out errors and the evaluation points', each weighing the same; the
stored ``INTERVAL80`` should equal them), and each source's share inside the interval
pooled from the other sources.
``--starts`` runs the whole fit from the stored values and from each of
``servekit.perf.calibrate.FIT_STARTS`` (one process per CPU) and prints each descent's loss and
whether the stored constants are the lowest-loss result (the rule the stored constants follow).
The table's halves also print the median predicted / measured throughput per input/output length.
Sources of ``EVALUATION_ONLY`` (bench/data; no constant is fitted on any of their lines) are
scored whole, each apart, and join the evaluation groups.
``--write`` also writes the report to bench/results/perf-points-DATE.txt.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import statistics
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from servekit.app.request import load_documents  # noqa: E402
from servekit.atomic import write_bytes_atomic  # noqa: E402
from servekit.hardware import profiles_for  # noqa: E402
from servekit.hardware.device_compute import compute_row  # noqa: E402
from servekit.perf.calibrate import (  # noqa: E402
    Measured, best_fit, calibration_half, figures, fit_constants, fits_from_starts, held_out_intervals, intervals_from,
    leave_group_out, leave_one_out, model_group, out_of_sample, pooled_intervals, predicted, prepare, weighted_by_source,
)
from servekit.perf.constants import CALIBRATION_POINTS, fitted_values  # noqa: E402
from servekit.perf.intervals import INTERVAL80, METRICS, leave_source_out  # noqa: E402

DEFAULT = REPO.parent / "shared" / "reference" / "perf-points-visible.jsonl"
TABLE = REPO / "bench" / "data" / "trtllm-perf-overview-v1.0.jsonl"
"""TensorRT-LLM's published throughput table as perf-points lines (bench/make_trtllm_overview_points.py):
prompt-heavy and long runs the visible file lacks (``servekit.perf.constants.TABLE_CALIBRATION``)."""
INFERENCEMAX = REPO / "bench" / "data" / "inferencemax-v1.jsonl"
"""InferenceMAX v1's published single-node runs as perf-points lines (bench/make_inferencemax_points.py):
recent releases of three engines on six parts (``servekit.perf.constants.INFERENCEMAX_CALIBRATION``)."""
EVALUATION_ONLY = (REPO / "bench" / "data" / "oracle-mi300x-llama-3.1-405b.jsonl",
                   REPO / "bench" / "data" / "wmx-l4-qwen2.5-0.5b.jsonl",
                   REPO / "bench" / "data" / "public-vllm-runs.jsonl")
"""Sources no constant is fitted on, scored whole: Oracle's vLLM runs of Llama 3.1 405B FP8 on eight
MI300X (bench/make_oracle_mi300x_points.py), the only AMD measurements here; a public concurrency
sweep of Qwen2.5-0.5B on an L4 with vLLM 0.23.0 (bench/make_wmx_l4_points.py), closed loops of
fixed lengths (the waves and cohort rules of ``servekit.perf.predict``); single vLLM runs on B200
and H100 from public issue threads and reports (bench/make_public_vllm_points.py)."""
PROBE = REPO / "bench" / "results" / "gpu-probe-h200-2026-12-04.json"
"""An H200's kernel rates (bench/gpu_probe.py), printed beside the fitted shares."""
SHORT = {"output_throughput_tok_s": "throughput", "tpot_ms": "TPOT", "ttft_ms": "TTFT"}


def score(points: list[Measured], profiles, values) -> dict[str, dict[str, float]]:
    """Per metric: count, median |relative error|, share inside the 80% interval."""
    errors: dict[str, list[float]] = defaultdict(list)
    inside: dict[str, list[bool]] = defaultdict(list)
    for m in points:
        got = figures(predicted(m, profiles, values))
        for k, v in m.measured.items():
            errors[k].append(abs(got[k] / v - 1))
            lo, hi = INTERVAL80[k]
            inside[k].append(got[k] * lo <= v <= got[k] * hi)
    return {k: {"n": len(errors[k]), "median": statistics.median(errors[k]),
                "coverage": sum(inside[k]) / len(inside[k])} for k in METRICS if errors[k]}


def print_score(title: str, points: list[Measured], profiles, values) -> None:
    print(f"{title} ({len(points)} points)")
    for k, s in score(points, profiles, values).items():
        print(f"  {SHORT[k]:10} n={s['n']:2}  median |error| {s['median']:6.1%}  inside 80% interval {s['coverage']:6.1%}")


def model_kind(m: Measured) -> str:
    """dense, MoE or MLA (an MLA model with routed experts counts as MLA), from config_facts."""
    cf = m.point.get("config_facts") or {}
    if cf.get("kv_lora_rank"):
        return "MLA"
    return "MoE" if cf.get("num_experts") or cf.get("n_routed_experts") or cf.get("num_local_experts") else "dense"


def regime(m: Measured) -> str:
    wl = m.point.get("workload") or {}
    if wl.get("request_rate"):
        return "request rate"
    return f"concurrency {wl['concurrency']}" if wl.get("concurrency") else "offline"


GROUPINGS = {
    "engine release and device": lambda m: (
        f"{m.point.get('engine')} {m.point.get('engine_version') or ''}".strip(), str(m.point.get("gpu"))),
    "model kind and regime": lambda m: (model_kind(m), regime(m)),
}


def print_groups(title: str, points: list[Measured], profiles, values) -> None:
    for name, key in GROUPINGS.items():
        groups: dict[tuple[str, str], list[Measured]] = defaultdict(list)
        for m in points:
            groups[key(m)].append(m)
        print(f"{title}, per {name}")
        for (first, second), members in sorted(groups.items()):
            cells = [f"{SHORT[k]} {s['median']:6.1%} (n={s['n']})" for k, s in score(members, profiles, values).items()]
            print(f"  {first:20} {second:13} " + "  ".join(cells))


def print_shapes(points: list[Measured], profiles, values) -> None:
    """Median predicted / measured throughput per input/output length (where a bias by shape shows)."""
    shapes: dict[str, list[float]] = defaultdict(list)
    for m in points:
        if "output_throughput_tok_s" in m.measured:
            wl = m.point["workload"]
            got = figures(predicted(m, profiles, values))["output_throughput_tok_s"]
            shapes[f"{wl['input_len']}/{wl['output_len']}"].append(got / m.measured["output_throughput_tok_s"])
    print("  predicted / measured throughput, median per input/output length: "
          + ", ".join(f"{k} {statistics.median(r):.2f} (n={len(r)})" for k, r in shapes.items()))


def print_loo(cal: list[Measured], profiles, values, first: int) -> None:
    """Leave-one-out over the first ``first`` calibration points (the visible file's: a refit per
    point of all three sources would take hours)."""
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        rows = leave_one_out(cal, profiles, values, mapper=pool.map, which=range(first))
    print(f"leave-one-out: each of the visible file's {first} calibration points left out, constants refitted "
          "(2 rounds from the stored values, the other sources' halves in the fit)")
    for key, stored in values.items():
        seen = [r["constants"][key] for r in rows]
        print(f"  {key:28} stored {stored:8.3f}  refits {min(seen):8.3f} .. {max(seen):8.3f}")
    for k in METRICS:
        rel = [abs(1 / r["ratios"][k] - 1) for r in rows if k in r["ratios"]]  # |predicted / measured - 1|
        if rel:
            print(f"  held-out {SHORT[k]:10} n={len(rel):2} median |error| {statistics.median(rel):6.1%}")
    bands = held_out_intervals(rows)
    print("  80% interval ratios from the held-out errors: "
          + ", ".join(f"{SHORT[k]} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in bands.items())
          + " (the stored INTERVAL80 pools every source's out-of-sample errors, --groups)")


def print_groups_out(cal: list[Measured], profiles, values,
                     sources: dict[str, tuple[set[str], list[Measured]]]) -> None:
    """Leave-one-model-out, then the rule of ``servekit.perf.intervals``: the interval pooled over
    every source's out-of-sample errors, and each source's share inside the one pooled without it."""
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        rows = leave_group_out(cal, profiles, values, mapper=pool.map)
    models = len({model_group(m) for m in cal})
    print(f"leave-one-model-out: the calibration points of each model ({models} models, by shape) left out together, "
          "constants refitted (2 rounds from the stored values)")
    for k in METRICS:
        rel = [abs(1 / r["ratios"][k] - 1) for r in rows if k in r["ratios"]]
        if rel:
            print(f"  held-out {SHORT[k]:10} n={len(rel):2} median |error| {statistics.median(rel):6.1%}")
    alone = held_out_intervals(rows)
    print("  80% interval ratios from these errors alone: "
          + ", ".join(f"{SHORT[k]} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in alone.items()))
    by_source = out_of_sample(rows, sources, profiles, values)
    bands = pooled_intervals(by_source)
    print("80% interval ratios from every source's out-of-sample errors (these, and the evaluation points "
          "with the stored constants), each weighing the same: "
          + ", ".join(f"{SHORT[k]} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in bands.items()))
    same = all(abs(bands[k][0] - INTERVAL80[k][0]) < 1e-3 and abs(bands[k][1] - INTERVAL80[k][1]) < 1e-3 for k in bands)
    print("  stored INTERVAL80 " + ("equals them" if same else "differs: update servekit.perf.intervals.INTERVAL80"))
    print("  each source inside the interval pooled from the other sources (leave-one-source-out):")
    left_out = {k: leave_source_out(by_source[k]) for k in METRICS}
    for name in sources:
        cells = []
        for k in METRICS:
            held = left_out[k].get(name)
            if held:
                (lo, hi), share = held
                cells.append(f"{SHORT[k]} {share:.0%} of {len(by_source[k][name])} ({lo:.3f}..{hi:.3f})")
        print(f"    {name}: " + ("; ".join(cells) or "no other source measures its metrics"))


def print_starts(cal: list[Measured], profiles, values) -> None:
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        fits = fits_from_starts(cal, profiles, mapper=pool.map)
    print(f"the fit from {len(fits)} starts (the stored values, then servekit.perf.calibrate.FIT_STARTS):")
    for fit in fits:
        start = ", ".join(f"{k} {v:g}" for k, v in fit.start.items()) or "the stored values"
        moved = {k: v for k, v in fit.values.items() if v != values[k]}
        print(f"  from {start}: loss {fit.loss:.4f}" + (f"; moves {moved}" if moved else "; the stored values"))
    best = best_fit(fits)
    print("  the stored constants are the lowest-loss fit" if best.values == values else
          f"  the lowest-loss fit (loss {best.loss:.4f}) is not the stored one: {best.values}")


def print_ceilings(values: dict[str, float]) -> None:
    """The fitted shares beside what an H200 reached in isolated kernels (bench/gpu_probe.py): a
    fitted share is the whole engine's, so it sits at or under the kernel's."""
    if not PROBE.is_file():
        print(f"H200 kernel ceilings: no probe run at {PROBE}")
        return
    run, row = json.loads(PROBE.read_text()), compute_row("h200")
    stream = {int(r): e["median"] / row.memory_gb_s for r, e in run["stream_gb_s"].items()}
    gemm = {f: [e["median"] / row.tflops[f] for e in run["gemm_tflops"][f].values()] for f in ("bf16", "fp8")}
    print(f"H200 kernel ceilings ({PROBE.name}), shares of the datasheet: weights streamed at "
          + ", ".join(f"{r} rows {s:.2f}" for r, s in sorted(stream.items()))
          + f" (fitted bandwidth_fraction {values['bandwidth_fraction']:.2f}); GEMMs "
          + ", ".join(f"{f.upper()} {min(v):.2f}..{max(v):.2f}" for f, v in gemm.items())
          + f" (fitted flops_fraction {values['flops_fraction']:.2f})")


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def halves_of(path: Path, profiles) -> tuple[list[Measured], list[Measured]]:
    """A split source's calibration half (``calibration_half``) and the rest, its evaluation points."""
    lines = read_lines(path)
    ids = {p["id"] for p in calibration_half(lines)}
    return (prepare([p for p in lines if p["id"] in ids], profiles),
            prepare([p for p in lines if p["id"] not in ids], profiles))


def report(path: Path, loo: bool, starts: bool = False, table: Path = TABLE, groups: bool = False) -> str:
    profiles = profiles_for(load_documents(None).taxonomy)
    lines = read_lines(path)
    measured = prepare(lines, profiles)
    halves = [(p.name, *halves_of(p, profiles)) for p in (table, INFERENCEMAX)]
    table_cal, table_ev = halves[0][1:]
    visible_cal = [m for m in measured if m.id in CALIBRATION_POINTS]
    ev = [m for m in measured if m.id not in CALIBRATION_POINTS]
    extra = [(p.name, prepare(read_lines(p), profiles)) for p in EVALUATION_ONLY if p.is_file()]
    cal = weighted_by_source(visible_cal, *(c for _, c, _ in halves))
    values = fitted_values()
    out = io.StringIO()
    with redirect_stdout(out):
        print(f"perf points: {path.name}, {len(measured)} points; "
              + "; ".join(f"{name}, {len(c) + len(e)} points" for name, c, e in halves)
              + "; constants: servekit.perf.constants")
        refit = fit_constants(cal, profiles, values, rounds=1)
        moved = {k: v for k, v in refit.items() if v != values[k]}
        print("stored constants are a fixed point of the fit" if not moved else f"a refit moves: {moved}")
        bands = intervals_from(cal, profiles, values)
        print("calibration residual spread (10th..90th percentile, in-sample): "
              + ", ".join(f"{SHORT[k]} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in bands.items()))
        print("80% interval ratios used (servekit.perf.intervals: every source's out-of-sample errors, the evaluation "
              "points' among them, so an evaluation set's share inside below is in-sample for the interval; "
              "--groups prints each source's share inside the interval pooled from the others): "
              + ", ".join(f"{SHORT[k]} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in INTERVAL80.items()))
        print_ceilings(values)
        print_score(f"calibration, {path.name}", visible_cal, profiles, values)
        for name, half, _ in halves:
            print_score(f"calibration, {name}", half, profiles, values)
        print_score(f"evaluation, {path.name}", ev, profiles, values)
        for name, _, half in halves:
            print_score(f"evaluation, {name}", half, profiles, values)
        for name, points in extra:
            print_score(f"evaluation, {name} (evaluation only)", points, profiles, values)
        print_groups("calibration", visible_cal + [m for _, c, _ in halves for m in c], profiles, values)
        print_groups("evaluation", ev + [m for _, _, e in halves for m in e] + [m for _, points in extra for m in points],
                     profiles, values)
        for name, half in (("calibration", table_cal), ("evaluation", table_ev)):
            print(f"{table.name}, {name} half:")
            print_shapes(half, profiles, values)
        if starts:
            print_starts(cal, profiles, values)
        if loo:
            print_loo(cal, profiles, values, len(visible_cal))
        if groups:
            sources = {path.name: ({m.id for m in visible_cal}, ev),
                       **{name: ({m.id for m in c}, e) for name, c, e in halves},
                       **{name: (set(), pts) for name, pts in extra}}
            print_groups_out(cal, profiles, values, sources)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="?", default=str(DEFAULT))
    parser.add_argument("--loo", action="store_true", help="leave-one-out refits (slow: about a minute)")
    parser.add_argument("--starts", action="store_true",
                        help="the whole fit from every start of FIT_STARTS (slow: minutes per start)")
    parser.add_argument("--groups", action="store_true",
                        help="leave-one-model-out refits, their intervals and the coverage those give (about a minute)")
    parser.add_argument("--write", action="store_true", help="also write bench/results/perf-points-DATE.txt")
    parser.add_argument("--table", default=str(TABLE), metavar="FILE",
                        help="the second calibration source (default: TensorRT-LLM's published table, bench/data)")
    args = parser.parse_args(argv)
    path, table = Path(args.points), Path(args.table)
    for p in (path, table, INFERENCEMAX):
        if not p.is_file():
            print(f"no points file at {p}", file=sys.stderr)
            return 2
    text = report(path, args.loo, args.starts, table, args.groups)
    print(text, end="")
    if args.write:
        name = f"perf-points-{datetime.date.today().isoformat()}.txt"
        write_bytes_atomic(REPO / "bench" / "results" / name, text.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
