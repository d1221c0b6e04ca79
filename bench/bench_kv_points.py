"""Accuracy of servekit's KV-pool predictions against measured vLLM start-up logs.

Usage: python bench/bench_kv_points.py [POINTS.jsonl ...] [--table FILE] [--all] [--verbose]
       [--sensitivity] [--write]

Reads kv-points lines (default: ../shared/reference/kv-points-visible.jsonl beside the repo), lays
over each the structured fields the table keeps for its free text (default:
tests/fit/data/kv_points_structured.yaml, each value with its reason: ``servekit.fit.point_table``)
and scores ``kv_tokens`` from ``servekit.fit.predict_point`` two ways, per architecture kind:

* ``logged``: the logged available KV memory is used where the line has it (this scores the KV
  bytes per token and the block layout only);
* ``model``: the logged memory is ignored and the whole memory model predicts the pool from the
  device memory (weights, activation peak, non-torch and CUDA-graph terms).

The points split in two. The calibration set holds every point a fitted number of the model was
fitted on or checked against (``servekit.fit.calibration_data``: measured constants, constants
checked on launches, release rules placed on launches); the evaluation set holds every other
point, and its score is the headline. Then, for each fitted number, a leave-one-out score: the
number refitted by its own rule without each of its points (``servekit.fit.calibration.refit``),
the held-out point's value against the refit and, for a point of this file, its whole-model pool
with the refitted number.

Each score gives the median |relative error|, the share of points within 10% and the worst case;
``predicted`` counts points that state their device memory (or a CPU KV space, or name a device
of the device table) and got a prediction. High- and medium-confidence points are scored
(``--all`` adds low-confidence ones). A field a line states in a form the reader does not read
(a line of another file, without the table's structured fields) is set aside and read as unstated
(``predict_point(..., set_aside_unreadable=True)``); the report counts the fields set aside. A version read only approximately is marked ``~`` per point,
an unstated one ``?``; an approximate version also names the rules that change inside the
release series it names (read as written, so those may not be the rules that ran) and, with
``--verbose``, the error under each other reading of the series (shown, never scored). ``--sensitivity`` re-scores the evaluation set with each constant halved
and doubled. ``--write`` also writes the report to bench/results/kv-points-DATE.txt. Exit status
1 when the evaluation set's model median exceeds the target.
"""

from __future__ import annotations

import argparse
import datetime
import io
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from servekit.atomic import write_bytes_atomic  # noqa: E402
from servekit.errors import ServekitError  # noqa: E402
from servekit.fit.calibration import VISIBLE, Calibration, fitted, refit, visible_points  # noqa: E402
from servekit.fit.calibration_data import CALIBRATIONS  # noqa: E402
from servekit.fit.constants import CONSTANTS, overridden  # noqa: E402
from servekit.fit.point_table import load_table, read_points, structured  # noqa: E402
from servekit.fit.points import predict_point  # noqa: E402
from servekit.fit.versions import overridden_rules  # noqa: E402
from servekit.hardware.device_memory import memory_row  # noqa: E402

DEFAULT_POINTS = REPO.parent / "shared" / "reference" / "kv-points-visible.jsonl"
DEFAULT_TABLE = REPO / "tests" / "fit" / "data" / "kv_points_structured.yaml"
RESULTS = REPO / "bench" / "results"
TARGET = 0.03
WITHIN = 0.10

Points = list[tuple[str, dict]]


def architecture_kind(arch_type: str) -> str:
    """The coarse kind of an ``arch_type`` label (a grouping of the report): text before any parenthesis."""
    return arch_type.split("(")[0].strip() or "unknown"


def load(paths: list[Path], table_path: Path, confidences: set[str]) -> Points:
    """(point id, line with its structured fields) of every line of the wanted confidence."""
    table = load_table(table_path)
    return [(pid, structured(pid, point, table)) for path in paths for pid, point in read_points(path)
            if point.get("confidence") in confidences]


def states_memory(point: dict) -> bool:
    """Whether the line gives its device memory: stated, a CPU KV space, or a device-table id."""
    env_space = any(str(f).startswith("VLLM_CPU_KVCACHE_SPACE=") for f in point.get("extra_flags") or [])
    named = bool(point.get("gpu_model")) and memory_row(str(point["gpu_model"])) is not None
    return bool(point.get("gpu_mem_gib")) or env_space or "VLLM_CPU_KVCACHE_SPACE" in (point.get("env") or {}) \
        or named


def predicted(point: dict, use_logged: bool) -> dict | None:
    try:
        return predict_point(point, use_logged_memory=use_logged, set_aside_unreadable=True)
    except ServekitError as exc:  # one unreadable line is reported, not the end of the run
        print(f"  {point.get('model', '')[:40]}: no prediction: {exc}", file=sys.stderr)
        return None


def error(point: dict, use_logged: bool) -> float | None:
    result = predicted(point, use_logged)
    if not result or result["kv_tokens"] is None or not point.get("measured_kv_tokens"):
        return None
    return result["kv_tokens"] / point["measured_kv_tokens"] - 1


def version_mark(point: dict) -> str:
    if point.get("vllm_version") is None:
        return "?"
    result = predicted(point, True)
    return "~" if result and result["version"]["approximate"] else " "


def unsettled_note(point: dict, use_logged: bool = False) -> str:
    """The rules an approximate version leaves open (``servekit.fit.versions.unsettled_rules``) and
    the error under each other reading of its series (``kv_tokens_by_reading``; shown, never
    scored: the score takes the version as written)."""
    result = predicted(point, use_logged)
    version = (result or {}).get("version", {})
    rules = version.get("unsettled") or []
    if not rules:
        return ""
    measured = point.get("measured_kv_tokens")
    others = [f"{release} {tokens / measured - 1:+.1%}" for release, tokens in
              list((version.get("kv_tokens_by_reading") or {}).items())[1:] if tokens and measured]
    also = f"; as {', '.join(others)}" if others else ""
    return f"  ({point['vllm_version']}: read as {version['read_as']}; unsettled: {', '.join(rules)}{also})"


def errors(points: Points, use_logged: bool, verbose: bool = False) -> dict[str, list[float]]:
    """{kind: [signed errors]} of the points that got a prediction."""
    by_kind: dict[str, list[float]] = defaultdict(list)
    for pid, point in points:
        found = error(point, use_logged)
        if found is None:
            continue
        by_kind[architecture_kind(point.get("arch_type", ""))].append(found)
        if verbose:
            print(f"  {pid:<28}{version_mark(point)} {point['model'][:40]:<40} {found:+8.1%}{unsettled_note(point, use_logged)}")
    return by_kind


def summary(values: list[float]) -> str:
    size = [abs(v) for v in values]
    if not size:
        return f"{'-':>8} {'-':>8} {'-':>8}"
    within = sum(v <= WITHIN for v in size) / len(size)
    return f"{statistics.median(size):>8.2%} {within:>8.0%} {max(size):>8.1%}"


def score(title: str, points: Points, verbose: bool) -> list[float]:
    """Print one set's table; return the whole model's errors."""
    print(f"\n{title}: {len(points)} points")
    if verbose:
        print("whole memory model, per point (~ approximate version, ? version not stated):")
    logged, model = errors(points, True), errors(points, False, verbose)
    approximate = [pid.rsplit(":", 1)[-1] for pid, point in points if version_mark(point) == "~"]
    if approximate:
        open_rules = sorted({r for _, point in points for r in (predicted(point, True) or {}).get(
            "version", {}).get("unsettled") or []})
        print(f"approximate versions (read as written, not guessed): ids {' '.join(approximate)}; rules that change "
              f"inside their release series: {', '.join(open_rules) or 'none'}")
    print(f"{'kind':<44} {'n':>3} | {'logged: median':>14} {'<=10%':>8} {'worst':>8} | "
          f"{'model: median':>14} {'<=10%':>8} {'worst':>8}")
    for kind in sorted(set(logged) | set(model)):
        print(f"{kind[:44]:<44} {len(model.get(kind, [])):>3} | {'':>6}{summary(logged.get(kind, []))} | "
              f"{'':>6}{summary(model.get(kind, []))}")
    every_logged = [e for v in logged.values() for e in v]
    every_model = [e for v in model.values() for e in v]
    print(f"{'all':<44} {len(every_model):>3} | {'':>6}{summary(every_logged)} | {'':>6}{summary(every_model)}")
    stating = [p for _, p in points if states_memory(p)]
    hits = sum((predicted(p, False) or {}).get("kv_tokens") is not None for p in stating)
    print(f"predictions for {hits} of {len(stating)} points that state their device memory or name a device "
          "of the device table")
    set_aside = Counter(note.split(" set aside", 1)[0].split("[")[0] for _, p in points
                        for note in (predicted(p, False) or {}).get("set_aside") or [])
    if set_aside:
        lines = sum(bool((predicted(p, False) or {}).get("set_aside")) for _, p in points)
        print(f"fields set aside on {lines} points (not in a structured form: read as unstated, never guessed): "
              + ", ".join(f"{k} x{n}" for k, n in sorted(set_aside.items())))
    return every_model


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


def data_notes(points: Points) -> list[str]:
    """One line per point whose structured fields are ambiguous (scored as written)."""
    return [f"{pid} {point.get('model', '')[:40]}: weights_gib {point['weights_gib']} over tp x pp "
            f"{int(point.get('tp') or 1) * int(point.get('pp') or 1)} is below the logged non-KV memory per rank; "
            "it may be a per-rank figure (a weights_gib_per_rank field would settle it)"
            for pid, point in points if weights_read_as_per_rank(point)]


def _with(cal: Calibration, fitted_value: object) -> AbstractContextManager[None]:
    """The model with a calibration's number set to ``fitted_value``."""
    if cal.rule_key is not None:
        return overridden_rules({cal.rule_key: fitted_value})  # type: ignore[dict-item]
    return overridden({cal.target: float(fitted_value)}) if fitted_value is not None else nullcontext()


def _shown(cal: Calibration, x: object) -> str:
    if x is None:
        return "left out" if cal.rule_key else "-"
    if isinstance(x, tuple):
        return "from " + ".".join(map(str, x))
    return f"{float(x) / cal.scale:.4g} {cal.unit}".strip()


def leave_one_out(cal: Calibration, by_id: dict[str, dict], verbose: bool) -> None:
    """One calibration: its rule and points, and each point held out of its refit."""
    visible = [o.point for o in cal.observations if o.point in by_id]
    head = f"{cal.target:<36} {cal.refit:<16} {len(cal.observations):>2} launches ({len(visible)} points of this file)"
    if cal.rule_key is not None:
        head += "" if cal.code_path else "  [no engine code path cited]"
    print(head)
    if not fitted(cal):
        what = "a release read from the code" if cal.rule_key else "a value from code or a stated assumption"
        print(f"    nothing to refit ({what}; checked on: {', '.join(visible) or 'the logs named'})")
        return
    full = refit(cal)
    value_errors, kv_full, kv_out, unfit = [], [], [], 0
    for obs in cal.observations:
        out = refit(cal, without=obs.point)
        unfit += out is None and cal.rule_key is None
        line = f"    {obs.point[:70]:<70} refit {_shown(cal, out):>14}"
        if obs.value is not None and out is not None and not isinstance(out, tuple):
            value_errors.append(abs(float(out) / cal.scale - obs.value))
            line += f"  held-out value {obs.value:.4g} {cal.unit}"
        point = by_id.get(obs.point)
        if point is not None:
            before, after = error(point, False), None
            with _with(cal, out):
                after = error(point, False)
            if before is not None and after is not None:
                kv_full.append(abs(before))
                kv_out.append(abs(after))
                line += f"  KV {before:+.1%} -> {after:+.1%}"
        if verbose:
            print(line)
    shown = f"    fitted {_shown(cal, full)}"
    if value_errors:
        shown += f"; held-out |value - refit| median {statistics.median(value_errors):.3g} {cal.unit}, " \
                 f"worst {max(value_errors):.3g}"
    if kv_out:
        shown += f"; KV of its points here: median {statistics.median(kv_full):.2%} fitted, " \
                 f"{statistics.median(kv_out):.2%} left out (worst {max(kv_out):.1%})"
    if unfit:
        shown += f"; {unfit} held out leave(s) no launch to refit from"
    print(shown)


def sensitivity(points: Points) -> None:
    def median() -> float:
        model = errors(points, False)
        return statistics.median(abs(e) for v in model.values() for e in v)

    base = median()
    print(f"\nsensitivity of the evaluation set's model median ({base:.2%}) to each constant:")
    for c in CONSTANTS:
        with overridden({c.id: c.value / 2}):
            half = median()
        with overridden({c.id: c.value * 2}):
            double = median()
        print(f"  {c.id:<40} x0.5 {half:>7.2%}   x2 {double:>7.2%}   ({c.kind})")


def report(points: Points, verbose: bool, extra: Callable[[Points], None] | None) -> float:
    """Print the whole report; return the evaluation set's model median."""
    calibration_ids = visible_points(CALIBRATIONS, VISIBLE)
    evaluation = [(pid, p) for pid, p in points if pid not in calibration_ids]
    calibration = [(pid, p) for pid, p in points if pid in calibration_ids]
    print("kv-points: evaluation set (no fitted number was fitted on or checked against these points) "
          "first, then the calibration set; version texts read as written (a development build before the "
          "release it names, an approximate release as written), never guessed")
    headline = score("EVALUATION SET", evaluation, verbose)
    print("  ids: " + " ".join(pid.rsplit(":", 1)[1] for pid, _ in evaluation))
    score("CALIBRATION SET", calibration, verbose)
    print("  ids: " + " ".join(pid.rsplit(":", 1)[1] for pid, _ in calibration))
    print(f"target: evaluation model median <= {TARGET:.0%}")
    print("\nleave-one-out per fitted number (refit by its own rule without each of its points; "
          "KV: whole-model error of that point with the number fitted on all points -> refitted without it):")
    by_id = dict(points)
    for cal in CALIBRATIONS:
        leave_one_out(cal, by_id, verbose)
    for note in data_notes(points):
        print(f"data note: {note}")
    if extra:
        extra(evaluation)
    return statistics.median(abs(e) for e in headline) if headline else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="*", type=Path, default=[DEFAULT_POINTS])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE, help="structured fields per point id")
    parser.add_argument("--all", action="store_true", help="include low-confidence points")
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per point")
    parser.add_argument("--sensitivity", action="store_true", help="halve and double each constant")
    parser.add_argument("--write", action="store_true", help="also write the report under bench/results/")
    args = parser.parse_args(argv)
    points = load(args.points, args.table, {"high", "medium", "low"} if args.all else {"high", "medium"})
    if not points:
        print("no points")
        return 1
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        median = report(points, args.verbose, sensitivity if args.sensitivity else None)
    print(buffer.getvalue(), end="")
    if args.write:
        suffix = "-all" if args.all else ""
        path = RESULTS / f"kv-points-{datetime.date.today().isoformat()}{suffix}.txt"
        write_bytes_atomic(path, buffer.getvalue().encode("utf-8"))
        print(f"written: {path.relative_to(REPO)}")
    return 0 if median <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
