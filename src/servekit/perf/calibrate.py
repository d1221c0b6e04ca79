"""Fitting the speed model's constants on measured points, and checking the fit.

``fit_constants`` runs coordinate descent (``descend``): for each fitted constant in turn (``constants.CONSTANTS``
order), every value of its grid is tried with the others held, and the one with the lowest loss
kept (ties: the value tried first); rounds repeat until none changes (at most ``ROUNDS``). The
stored constants are the lowest-loss result of the descents from the stored values and from each
of ``FIT_STARTS`` (``best_fit``: the descent finds the nearest basin, not the lowest). The loss
is the weighted mean over points of the mean |ln(predicted / measured)| over the metrics a point
measured (output throughput, TPOT, TTFT); the calibration set joins three sources, the visible
file's ``constants.CALIBRATION_POINTS`` and the calibration halves (``calibration_half``) of
TensorRT-LLM's published table and of InferenceMAX v1's published runs, each weighing the same
(``weighted_by_source``). The CPU backend's
constants (suffix ``vllm_cpu``) move only with points of that backend: no point of either file is
one (``bench/bench_cpu_overheads.py`` fits them on their own calibration set). The measured figures
are read here and only here; ``servekit perf --points`` never reads them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from servekit.hardware.profile import HardwareProfile
from servekit.perf.constants import CONSTANTS, FITTED, OVERHEAD_KEYS, PerfConstant, fitted_values
from servekit.perf.intervals import METRICS, interval_ratios, pooled_ratios, symmetric_ratios
from servekit.perf.points import kv_pool, launch_of, normal_point, point_profile, shape_facts, workload_of
from servekit.perf.predict import Prediction, predict
from servekit.records import record

ROUNDS = 6


@record
class Measured:
    """One point ready for fitting: the line, its KV pool (independent of the constants) and what
    was measured."""

    point: Mapping[str, Any]
    pool: dict
    measured: dict[str, float]
    weight: float = 1.0
    """The point's share of the loss (``weighted_by_source``: each calibration source weighs the same)."""

    @property
    def id(self) -> str:
        return str(self.point.get("id"))


def measured_of(point: Mapping[str, Any]) -> dict[str, float]:
    m = point.get("measured") or {}
    return {k: float(m[k]) for k in METRICS if isinstance(m.get(k), int | float) and m[k] > 0}


def prepare(points: Iterable[Mapping[str, Any]], profiles: Mapping[str, HardwareProfile],
            weight: float = 1.0) -> list[Measured]:
    out = []
    for point in map(normal_point, points):
        profile = point_profile(str(point["gpu"]), profiles)
        pool = kv_pool(point, shape_facts(point), profile, int(point.get("tp") or 1), int(point.get("pp") or 1))
        out.append(Measured(point, pool, measured_of(point), weight))
    return out


def calibration_half(points: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Within each (engine, device) group, every other point in file order, starting with the first:
    the rule that chose ``constants.CALIBRATION_POINTS`` of the visible file and the calibration
    halves of TensorRT-LLM's published table (``constants.TABLE_CALIBRATION``) and InferenceMAX v1's
    runs (``constants.INFERENCEMAX_CALIBRATION``)."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for point in points:
        key = (str(point.get("engine")), str(point.get("gpu")))
        if seen.get(key, 0) % 2 == 0:
            out.append(point)
        seen[key] = seen.get(key, 0) + 1
    return out


def weighted_by_source(*sources: Sequence[Measured]) -> list[Measured]:
    """The points of several calibration sources, each point weighted so that every source weighs
    the same in the loss (a source of many points does not outvote one of few)."""
    return [Measured(m.point, m.pool, m.measured, 1.0 / len(points)) for points in sources for m in points]


def predicted(m: Measured, profiles: Mapping[str, HardwareProfile], values: Mapping[str, float]) -> Prediction:
    return predict(launch_of(m.point, profiles, values, m.pool), workload_of(m.point))


def figures(pred: Prediction) -> dict[str, float]:
    return {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms": pred.ttft_ms, "tpot_ms": pred.tpot_ms}


def point_errors(m: Measured, pred: Prediction) -> dict[str, float]:
    """|ln(predicted / measured)| per measured metric."""
    got = figures(pred)
    return {k: abs(math.log(got[k] / v)) for k, v in m.measured.items()}


def loss(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile], values: Mapping[str, float]) -> float:
    total = weights = 0.0
    for m in points:
        errors = point_errors(m, predicted(m, profiles, values))
        total += m.weight * (statistics.fmean(errors.values()) if errors else 0.0)
        weights += m.weight
    return total / weights if weights else 0.0


def _touches(key: str, points: Sequence[Measured]) -> bool:
    """A per-engine constant moves only with points of its engine."""
    suffix = key.split(".", 1)[1] if "." in key else ""
    if suffix not in OVERHEAD_KEYS:
        return True
    return any(m.point.get("engine") == suffix for m in points)


def descend(constants: Sequence[PerfConstant], start: Mapping[str, float],
            loss_of: Callable[[Mapping[str, float]], float], rounds: int = ROUNDS) -> dict[str, float]:
    """Coordinate descent: each constant in turn takes the value of its grid with the lowest
    ``loss_of`` (the others held; ties keep the current value), until a round changes none."""
    values = dict(start)
    for _ in range(rounds):
        changed = False
        for c in constants:
            best, best_loss = values[c.id], loss_of(values)
            for candidate in c.grid:
                trial = loss_of({**values, c.id: candidate})
                if trial < best_loss - 1e-12:
                    best, best_loss = candidate, trial
            changed |= best != values[c.id]
            values[c.id] = best
        if not changed:
            break
    return values


def fit_constants(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
                  start: Mapping[str, float] | None = None, rounds: int = ROUNDS) -> dict[str, float]:
    moving = [c for c in CONSTANTS if c.kind == FITTED and _touches(c.id, points)]
    return descend(moving, start or fitted_values(), lambda values: loss(points, profiles, values), rounds)


FIT_STARTS: tuple[dict[str, float], ...] = tuple(
    {"bandwidth_fraction": bandwidth, "flops_fraction": flops, "flops_scale.trtllm": trtllm,
     "seq_overhead_us.vllm": seq, "seq_overhead_us.sglang": 2 * seq}
    for bandwidth in (0.6, 0.8) for flops in (0.25, 0.5) for trtllm in (1.0, 2.0) for seq in (55.0, 110.0)
) + tuple({"layer_overhead_us": 0.0, "bandwidth_fraction": bw} for bw in (0.7, 0.8))
"""Where ``best_fit`` starts the descent besides the stored values (each start sets these and keeps
the stored values of the rest). Coordinate descent settles in the basin nearest its start, and the
calibration loss has several: memory- against compute-bound readings of the same steps, the CPU's
share of a large batch's step, and a per-layer cost against the bandwidth share
(bench/results/README.md)."""


@record
class Fit:
    """One descent: where it started (``{}`` for the stored values), where it ended, its loss."""

    start: dict[str, float]
    values: dict[str, float]
    loss: float


def fit_from(start: Mapping[str, float], points: Sequence[Measured], profiles: Mapping[str, HardwareProfile]) -> Fit:
    """The descent from the stored values with ``start``'s values put in."""
    values = fit_constants(points, profiles, {**fitted_values(), **start})
    return Fit(dict(start), values, loss(points, profiles, values))


def fits_from_starts(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
                     starts: Sequence[Mapping[str, float]] = FIT_STARTS, mapper: Callable = map) -> list[Fit]:
    """The fit from the stored values, then from each start, in that order (``mapper``: ``map``,
    or a process pool's, as the benchmark runs them)."""
    every = ({}, *starts)
    return list(mapper(fit_from, every, [points] * len(every), [profiles] * len(every)))


def best_fit(fits: Sequence[Fit]) -> Fit:
    """The lowest calibration loss (ties: the earlier fit)."""
    return min(fits, key=lambda f: f.loss)


def ratio_rows(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
               values: Mapping[str, float]) -> list[dict[str, float]]:
    """Each point's measured / predicted per metric it measures."""
    rows = []
    for m in points:
        got = figures(predicted(m, profiles, values))
        rows.append({k: v / got[k] for k, v in m.measured.items()})
    return rows


def ratios(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
           values: Mapping[str, float]) -> dict[str, list[float]]:
    """measured / predicted per metric over ``points``."""
    out: dict[str, list[float]] = {k: [] for k in METRICS}
    for row in ratio_rows(points, profiles, values):
        for k, r in row.items():
            out[k].append(r)
    return out


def intervals_from(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
                   values: Mapping[str, float]) -> dict[str, tuple[float, float]]:
    return {k: interval_ratios(r) for k, r in ratios(points, profiles, values).items() if r}


def left_out(i: int, points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
             values: Mapping[str, float], rounds: int = 2) -> dict[str, Any]:
    """Point ``i`` left out: the constants refitted without it (starting from ``values``; the
    others keep their weights), its errors under them and its measured / predicted ratios."""
    m = points[i]
    refit = fit_constants([p for j, p in enumerate(points) if j != i], profiles, values, rounds)
    pred = predicted(m, profiles, refit)
    got = figures(pred)
    return {"id": m.id, "constants": refit, "errors": point_errors(m, pred), "weight": m.weight,
            "ratios": {k: v / got[k] for k, v in m.measured.items()}}


def leave_one_out(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
                  values: Mapping[str, float], rounds: int = 2, mapper: Callable = map,
                  which: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """``left_out`` for each calibration point in turn, or for the points at ``which`` (``mapper``:
    ``map``, or a process pool's)."""
    chosen = list(range(len(points)) if which is None else which)
    n = len(chosen)
    return list(mapper(left_out, chosen, [points] * n, [profiles] * n, [values] * n, [rounds] * n))


def model_group(m: Measured) -> tuple[Any, ...]:
    """The model a point measures, by its shape (``config_facts``: width, depth, routed experts):
    a checkpoint and its quantized releases are one group."""
    cf = m.point.get("config_facts") or {}
    experts = cf.get("num_experts") or cf.get("n_routed_experts") or cf.get("num_local_experts")
    return cf.get("hidden_size"), cf.get("num_hidden_layers"), experts


def left_group_out(members: Sequence[int], points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
                   values: Mapping[str, float], rounds: int = 2) -> list[tuple[int, dict[str, Any]]]:
    """The points ``members`` left out together: the constants refitted without any of them
    (starting from ``values``), and each one's index and row as ``left_out`` gives it."""
    out = set(members)
    refit = fit_constants([p for j, p in enumerate(points) if j not in out], profiles, values, rounds)
    rows = []
    for i in members:
        m, pred = points[i], predicted(points[i], profiles, refit)
        got = figures(pred)
        rows.append((i, {"id": m.id, "constants": refit, "errors": point_errors(m, pred), "weight": m.weight,
                         "ratios": {k: v / got[k] for k, v in m.measured.items()}}))
    return rows


def leave_group_out(points: Sequence[Measured], profiles: Mapping[str, HardwareProfile],
                    values: Mapping[str, float], group: Callable[[Measured], Any] = model_group,
                    rounds: int = 2, mapper: Callable = map) -> list[dict[str, Any]]:
    """``left_group_out`` for each group of the calibration points in turn (by default every point
    of one model: a new source measures models the calibration set has not, where leaving one
    point out keeps its siblings of the same model on other engines and devices in the fit), the
    rows of every group together in the points' order."""
    groups: dict[Any, list[int]] = {}
    for i, m in enumerate(points):
        groups.setdefault(group(m), []).append(i)
    members = list(groups.values())
    n = len(members)
    rows = [pair for batch in mapper(left_group_out, members, [points] * n, [profiles] * n, [values] * n,
                                     [rounds] * n) for pair in batch]
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def held_out_intervals(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, float]]:
    """The 80% interval ratios from ``leave_one_out`` rows (``intervals.symmetric_ratios`` of each
    point's measured / predicted when the constants were fitted without it, weighted as the loss
    weighs the point; a row without a weight weighs 1)."""
    out: dict[str, list[float]] = {k: [] for k in METRICS}
    weights: dict[str, list[float]] = {k: [] for k in METRICS}
    for row in rows:
        for k, r in row["ratios"].items():
            out[k].append(r)
            weights[k].append(row.get("weight", 1.0))
    return {k: symmetric_ratios(r, weights=weights[k]) for k, r in out.items() if r}


def out_of_sample(rows: Sequence[Mapping[str, Any]], sources: Mapping[str, tuple[Iterable[str], Sequence[Measured]]],
                  profiles: Mapping[str, HardwareProfile],
                  values: Mapping[str, float]) -> dict[str, dict[str, list[float]]]:
    """metric -> source -> the out-of-sample measured / predicted ratios of each source
    (``servekit.perf.intervals``): ``sources`` maps a source to (the ids of its calibration points,
    whose ratios come from ``rows``, the rows of ``leave_group_out``, in their order; its evaluation
    points, predicted with ``values``)."""
    out: dict[str, dict[str, list[float]]] = {k: {} for k in METRICS}
    for name, (calibration_ids, evaluation) in sources.items():
        ids = set(calibration_ids)
        found = [row["ratios"] for row in rows if row["id"] in ids] + ratio_rows(evaluation, profiles, values)
        for k in METRICS:
            got = [r[k] for r in found if k in r]
            if got:
                out[k][name] = got
    return out


def pooled_intervals(by_source: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, tuple[float, float]]:
    """``intervals.pooled_ratios`` per metric of ``out_of_sample``'s ratios (a metric no source measures is left out)."""
    return {k: pooled_ratios(sources) for k, sources in by_source.items() if any(sources.values())}
