"""The 80% interval rule: a prediction times the ratios within which 80% of the out-of-sample
errors fall, per metric.

An out-of-sample error is a measured / predicted ratio the constants were not fitted on, of two
kinds: each calibration point predicted with the constants refitted without any point of its model
(``servekit.perf.calibrate.leave_group_out``: a checkpoint and its quantized releases by shape; the
calibration residuals themselves, fitted on those very points, understate the spread, and so does
leaving one point out, which keeps the same model's points on other engines and devices in the fit),
and each evaluation point predicted with the stored constants (the other points of each calibration
file, and every point of the sources no constant is fitted on), each error weighing the same
(``pooled_ratios``; the sources differ too much in kind to count as equal units: a six-point sweep of
one model on one part beside a file of twelve models on three engines). Calibration errors alone
leave out what sets sources apart (a source is a file of points: one publisher's machines, engine
builds and habits): fitted on one publisher's served runs and a throughput table,
leave-one-model-out's TTFT band (0.636..1.572) held 50-61% of the TTFT measurements of every source
the constants never saw, and its throughput band (0.696..1.437) 94-100% of four of them
(bench/results/README.md, 2026-12-07). The pool of the sources before InferenceMAX v1's runs
(0.743..1.346 / 0.580..1.725 / 0.699..1.431 for throughput / TTFT / TPOT) held 59% / 52% / 63% of
those 563 runs of three engines on six parts; with half of them fitted on and every one of their
out-of-sample errors in the pool, each source's share inside the interval pooled from the others
is 50-100% (bench/results/perf-points-2026-12-07-fp4-experts-groups.txt).

The interval is symmetric in log space: ``exp(+-q)`` where ``q`` is the 80th percentile of
|ln(measured / predicted)| (linear interpolation between order statistics), so a bias of either sign
on new sources is covered alike. The same ratios serve the median and the p99 figures, which no
calibration point measures apart.

``INTERVAL80`` holds the ratios ``bench/bench_perf_points.py --groups`` computes with the fitted
constants. Because the evaluation points help set the interval, their share inside it is no test
of it; the bench reports instead each source's share inside the interval pooled from the other
sources (``leave_source_out``). It serves the GPU backends.

The CPU backend (``servekit.perf.constants.CPU_KEY``) has its own, ``CPU_INTERVAL80``: its
constants are fitted on a few loads of one machine (``CPU_CALIBRATION``), and what its
predictions miss by is mostly that machine's speed at another hour (a shared machine's memory
bandwidth moves by half between hours while the probe measures one moment), which no GPU point
shows. The same symmetric rule, over the CPU loads not fitted on: ``servekit bench`` of the
calibration model at a workload none of the calibration loads ran (bench/results/cpu-loads.jsonl,
written by ``bench/bench_cpu_interval.py --write``; ``--ratios`` prints what they give), each
load weighing the same and each predicted again with the stored constants from the CPU figures it
recorded (the constants are refitted now and then; loads that recorded no figures are left out).

The CPU backend's p99 figures have ratios of their own too (``"ttft_ms.p99"``, ``"tpot_ms.p99"``,
over the loads that recorded them). A ``servekit bench`` load runs in waves
(``servekit.perf.predict``, lockstep), so its p99 is the figure of its slowest wave: the prediction
is the typical wave's, and how far the slowest of a load's waves strays from it is how much this
machine's step times jitter from one wave to the next (the requests' own figures in the evidence,
``requests``, show the waves apart), which no rule of the model predicts. The GPU table has no p99
entries: no GPU point measures a tail, and the p99 figures take the medians' ratios
(``ratios_for``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from servekit.perf.constants import CPU_KEY

METRICS = ("output_throughput_tok_s", "ttft_ms", "tpot_ms")

INTERVAL80: dict[str, tuple[float, float]] = {
    "output_throughput_tok_s": (0.732, 1.367),
    "ttft_ms": (0.605, 1.654),
    "tpot_ms": (0.700, 1.429),
}

CPU_INTERVAL80: dict[str, tuple[float, float]] = {
    "output_throughput_tok_s": (0.879, 1.138),
    "ttft_ms": (0.845, 1.184),
    "tpot_ms": (0.877, 1.141),
    "ttft_ms.p99": (0.609, 1.641),
    "tpot_ms.p99": (0.830, 1.206),
}

COVERAGE = 0.8

LOAD_FIGURES = {"output_throughput_tok_s": "output_throughput_tok_s", "ttft_ms": "ttft_ms.median",
                "tpot_ms": "tpot_ms.median", "ttft_ms.p99": "ttft_ms.p99", "tpot_ms.p99": "tpot_ms.p99"}
"""The figure of a held-out CPU load (``measured`` / ``predicted``) each entry's interval is taken from."""


def quantile(values: Sequence[float], q: float, weights: Sequence[float] | None = None) -> float:
    """The weighted ``q`` quantile of ``values`` (equal weights when none are given): each value,
    in ascending order, stands at the middle of its share of the total weight (its cumulative
    weight less half its own, over the total), with linear interpolation between them; a ``q``
    beyond the first or last such position takes that value."""
    if not values:
        raise ValueError("no values")
    pairs = sorted(zip(values, weights if weights is not None else [1.0] * len(values), strict=True))
    total = sum(w for _, w in pairs)
    at, before = [], 0.0
    for _, w in pairs:
        at.append((before + w / 2) / total)
        before += w
    if q <= at[0]:
        return pairs[0][0]
    for i in range(1, len(pairs)):
        if q <= at[i]:
            lo, hi = pairs[i - 1][0], pairs[i][0]
            return lo + (hi - lo) * (q - at[i - 1]) / (at[i] - at[i - 1])
    return pairs[-1][0]


def interval_ratios(ratios: Sequence[float]) -> tuple[float, float]:
    """(10th, 90th percentile) of measured / predicted ratios (the in-sample spread)."""
    return quantile(ratios, 0.1), quantile(ratios, 0.9)


def symmetric_ratios(ratios: Sequence[float], coverage: float = COVERAGE,
                     weights: Sequence[float] | None = None) -> tuple[float, float]:
    """(1 / r, r) with ln r the ``coverage`` quantile of |ln(measured / predicted)| (``weights``:
    each ratio's, as the calibration loss weighs its point)."""
    spread = quantile([abs(math.log(r)) for r in ratios], coverage, weights)
    return math.exp(-spread), math.exp(spread)


def pooled_ratios(by_source: Mapping[str, Sequence[float]], coverage: float = COVERAGE) -> tuple[float, float]:
    """``symmetric_ratios`` over the ratios of every source of ``by_source`` (source -> measured /
    predicted ratios), each ratio weighing the same."""
    ratios = [r for values in by_source.values() for r in values]
    if not ratios:
        raise ValueError("no ratios")
    return symmetric_ratios(ratios, coverage)


def leave_source_out(by_source: Mapping[str, Sequence[float]],
                     coverage: float = COVERAGE) -> dict[str, tuple[tuple[float, float], float]]:
    """Per source with ratios: (the ratios ``pooled_ratios`` gives over the other sources, the
    share of this source's ratios inside them); a source is left out only where another has ratios."""
    out = {}
    for name, values in by_source.items():
        others = {k: v for k, v in by_source.items() if k != name and v}
        if values and others:
            lo, hi = pooled_ratios(others, coverage)
            out[name] = ((lo, hi), sum(lo <= r <= hi for r in values) / len(values))
    return out


def cpu_interval(loads: Sequence[Mapping[str, Any]], coverage: float = COVERAGE) -> dict[str, tuple[float, float]]:
    """The CPU backend's interval ratios from held-out loads (each ``{"measured": {...},
    "predicted": {...}}`` keyed by ``LOAD_FIGURES``' figures), each load that recorded a figure
    weighing the same in its entry, rounded as the stored tables are; an entry no load recorded
    is left out."""
    out = {}
    for key, figure in LOAD_FIGURES.items():
        ratios = [load["measured"][figure] / load["predicted"][figure] for load in loads
                  if figure in load["measured"] and figure in load["predicted"]]
        if ratios:
            lo, hi = symmetric_ratios(ratios, coverage)
            out[key] = (round(lo, 3), round(hi, 3))
    return out


def ratios_for(table: Mapping[str, tuple[float, float]], metric: str, stat: str | None = None) -> tuple[float, float]:
    """The interval ratios of ``metric``'s ``stat`` figure (None or "median": the metric's own
    entry; "p99": its ``METRIC.p99`` entry where the table has one, else the metric's)."""
    if stat == "p99" and f"{metric}.p99" in table:
        return table[f"{metric}.p99"]
    return table[metric]


def interval80_for(backend: str) -> dict[str, tuple[float, float]]:
    """The 80% interval ratios of predictions for ``backend`` (an overhead key,
    ``servekit.perf.launch.overhead_key``)."""
    return CPU_INTERVAL80 if backend == CPU_KEY else INTERVAL80


def interval_source(backend: str) -> str:
    """Where ``interval80_for(backend)`` comes from, in a few words."""
    if backend == CPU_KEY:
        return "the CPU backend's loads not fitted on (bench/results/cpu-loads.jsonl)"
    return ("every source's out-of-sample errors (leave-one-model-out of the calibration points, the "
            "evaluation points with the fitted constants), each weighing the same")
