"""The 80% interval rule: a prediction times the ratios within which 80% of the held-out errors
fall, per metric.

The errors are those of ``servekit.perf.calibrate.leave_group_out``: the calibration points of
each model (by shape: a checkpoint and its quantized releases) predicted with the constants
refitted without any of them (an out-of-sample spread; the calibration residuals themselves,
fitted on those very points, understate it, and so does leaving one point out, which keeps the
same model's points on other engines and devices in the fit, where a new source measures models
the fit has not seen), each weighted as the calibration loss weighs its point (each calibration
source weighs the same). The interval is symmetric in
log space: ``exp(+-q)`` where ``q`` is the 80th percentile of |ln(measured / predicted)| (linear
interpolation between order statistics), so a bias of either sign on new sources is covered alike.
The same ratios serve the median and the p99 figures, which no calibration point measures apart.

``INTERVAL80`` holds the ratios ``bench/bench_perf_points.py --groups`` computed with the fitted
constants; it reports how often the evaluation points fall inside. It serves the GPU backends.
(Leaving one point out at a time gives ratios of 0.704..1.420 for throughput, 0.633..1.580 for
TTFT and 0.695..1.438 for TPOT. These hold 78%, 61% and 89% of the visible evaluation
measurements and 94% of the TensorRT-LLM table's; the intervals of the constants before, fitted
with a life of one average step, were wider for TTFT (0.560..1.786) and held 87%, 83%, 83% and 85%,
bench/results/README.md.)

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
    "output_throughput_tok_s": (0.696, 1.437),
    "ttft_ms": (0.636, 1.572),
    "tpot_ms": (0.695, 1.438),
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
    return "the leave-one-model-out errors of the calibration points"
