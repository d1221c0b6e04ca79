"""Accuracy of servekit's KV-pool predictions against measured vLLM start-up logs.

Usage: python bench/bench_kv_points.py [POINTS.jsonl ...] [--table FILE] [--all] [--verbose] [--sensitivity]

Reads kv-points lines (default: ../shared/reference/kv-points-visible.jsonl beside the repo), lays
over each the structured fields the table keeps for its free text (default:
tests/fit/data/kv_points_structured.yaml, each value with its reason: ``servekit.fit.point_table``)
and scores ``kv_tokens`` from ``servekit.fit.predict_point`` two ways, per architecture kind:

* ``logged``: the logged available KV memory is used where the line has it (this scores the KV
  bytes per token and the block layout only);
* ``model``: the logged memory is ignored and the whole memory model predicts the pool from the
  device memory (weights, activation peak, non-torch and CUDA-graph terms).

Each score gives the median |relative error|, the share of points within 10% and the worst case;
``predicted`` counts points that state their device memory (or a CPU KV space), or name a GPU
of the device table (``gpu_model``), and got a prediction. High- and medium-confidence points are scored (``--all`` adds low-confidence ones).
``--sensitivity`` re-scores the model with each constant of ``servekit.fit.constants`` halved and
doubled. Data notes name points whose structured fields contradict each other (they are scored
as written; see ``data_notes``). Exit status 1 when the model's overall median exceeds the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_POINTS = REPO.parent / "shared" / "reference" / "kv-points-visible.jsonl"
DEFAULT_TABLE = REPO / "tests" / "fit" / "data" / "kv_points_structured.yaml"
TARGET = 0.03
WITHIN = 0.10


def architecture_kind(arch_type: str) -> str:
    """The coarse kind of an ``arch_type`` label: text before any parenthesis."""
    return arch_type.split("(")[0].strip() or "unknown"


def read_points(paths: list[Path], table_path: Path, confidences: set[str]) -> list[tuple[str, dict]]:
    """(point id, line with its structured fields) of every line of the wanted confidence."""
    from servekit.fit.point_table import load_table, read_points as read_lines, structured

    table = load_table(table_path)
    return [(pid, structured(pid, point, table)) for path in paths for pid, point in read_lines(path)
            if point.get("confidence") in confidences]


def states_memory(point: dict) -> bool:
    env_space = any(str(f).startswith("VLLM_CPU_KVCACHE_SPACE=") for f in point.get("extra_flags") or [])
    return bool(point.get("gpu_mem_gib")) or env_space or "VLLM_CPU_KVCACHE_SPACE" in (point.get("env") or {})


def names_known_memory(point: dict) -> bool:
    """A point that does not state its device memory but names a device of the device table
    (``gpu_model``: ``servekit.hardware.device_memory``)."""
    from servekit.hardware.device_memory import memory_row

    return not states_memory(point) and memory_row(str(point.get("gpu_model") or "")) is not None


def errors(points: list[tuple[str, dict]], use_logged: bool, verbose: bool = False) -> tuple[dict, int, int]:
    """({kind: [signed errors]}, points that state or name a known device memory, of those predicted)."""
    from servekit.errors import ServekitError
    from servekit.fit.points import predict_point

    by_kind: dict[str, list[float]] = defaultdict(list)
    stating = predicted_count = 0
    for where, point in points:
        try:
            predicted = predict_point(point, use_logged_memory=use_logged)["kv_tokens"]
        except ServekitError as exc:  # one unreadable line is reported, not the end of the run
            print(f"  {where}: no prediction: {exc}", file=sys.stderr)
            predicted = None
        if states_memory(point) or names_known_memory(point):
            stating += 1
            predicted_count += predicted is not None
        if predicted is None or not point.get("measured_kv_tokens"):
            continue
        error = predicted / point["measured_kv_tokens"] - 1
        by_kind[architecture_kind(point.get("arch_type", ""))].append(error)
        if verbose:
            print(f"  {where:<30} {point['model'][:40]:<40} {predicted:>11,} vs {point['measured_kv_tokens']:>11,} "
                  f"{error:+.1%}")
    return by_kind, stating, predicted_count


def weights_read_as_per_rank(point: dict) -> bool:
    """A multi-rank point whose ``weights_gib`` (the checkpoint, split over TP x PP) is no larger
    than the memory the log says each rank spent besides the KV cache (``gpu_mem_gib`` x
    ``gpu_memory_utilization`` - ``available_kv_gib_per_gpu``): the figure reads as per rank as
    well as per checkpoint, and the schema cannot tell which."""
    ranks = int(point.get("tp") or 1) * int(point.get("pp") or 1)
    fields = ("weights_gib", "gpu_mem_gib", "gpu_memory_utilization", "available_kv_gib_per_gpu")
    if ranks <= 1 or point.get("weights_gib_per_rank") is not None or not all(point.get(f) for f in fields):
        return False
    spent = point["gpu_mem_gib"] * point["gpu_memory_utilization"] - point["available_kv_gib_per_gpu"]
    return float(point["weights_gib"]) <= spent


def data_notes(points: list[tuple[str, dict]]) -> list[str]:
    """One line per point whose structured fields are ambiguous (scored as written)."""
    return [f"{where} {point.get('model', '')[:40]}: weights_gib {point['weights_gib']} over tp x pp "
            f"{int(point.get('tp') or 1) * int(point.get('pp') or 1)} is below the logged non-KV memory per rank; "
            "it may be a per-rank figure (a weights_gib_per_rank field would settle it)"
            for where, point in points if weights_read_as_per_rank(point)]


def summary(values: list[float]) -> str:
    size = [abs(v) for v in values]
    if not size:
        return f"{'-':>8} {'-':>8} {'-':>8}"
    within = sum(v <= WITHIN for v in size) / len(size)
    return f"{statistics.median(size):>8.2%} {within:>8.0%} {max(size):>8.1%}"


def report(points: list[tuple[str, dict]], verbose: bool) -> float:
    logged, _, _ = errors(points, True, verbose and False)
    if verbose:
        print("whole memory model, per point:")
    model, stating, predicted = errors(points, False, verbose)
    print(f"{'kind':<44} {'n':>3} | {'logged: median':>14} {'<=10%':>8} {'worst':>8} | "
          f"{'model: median':>14} {'<=10%':>8} {'worst':>8}")
    for kind in sorted(set(logged) | set(model)):
        print(f"{kind[:44]:<44} {len(model.get(kind, [])):>3} | {'':>6}{summary(logged.get(kind, []))} | "
              f"{'':>6}{summary(model.get(kind, []))}")
    every_logged = [e for v in logged.values() for e in v]
    every_model = [e for v in model.values() for e in v]
    print(f"{'all':<44} {len(every_model):>3} | {'':>6}{summary(every_logged)} | {'':>6}{summary(every_model)}")
    named = sum(names_known_memory(p) for _, p in points)
    print(f"predictions for {predicted} of {stating} points that state their device memory or name a device "
          f"of the device table ({named} by id only); target: model median <= {TARGET:.0%}")
    for note in data_notes(points):
        print(f"data note: {note}")
    return statistics.median(abs(e) for e in every_model) if every_model else 1.0


def sensitivity(points: list[tuple[str, dict]]) -> None:
    from servekit.fit.constants import CONSTANTS, overridden

    def median() -> float:
        model, _, _ = errors(points, False)
        return statistics.median(abs(e) for v in model.values() for e in v)

    base = median()
    print(f"\nsensitivity of the model median ({base:.2%}) to each constant:")
    for c in CONSTANTS:
        with overridden({c.id: c.value / 2}):
            half = median()
        with overridden({c.id: c.value * 2}):
            double = median()
        print(f"  {c.id:<40} x0.5 {half:>7.2%}   x2 {double:>7.2%}   ({c.kind})")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO / "src"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="*", type=Path, default=[DEFAULT_POINTS])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE, help="structured fields per point id")
    parser.add_argument("--all", action="store_true", help="include low-confidence points")
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per point")
    parser.add_argument("--sensitivity", action="store_true", help="halve and double each constant")
    args = parser.parse_args(argv)
    points = read_points(args.points, args.table, {"high", "medium", "low"} if args.all else {"high", "medium"})
    if not points:
        print("no points")
        return 1
    median = report(points, args.verbose)
    if args.sensitivity:
        sensitivity(points)
    return 0 if median <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
