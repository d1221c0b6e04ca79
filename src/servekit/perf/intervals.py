"""The 80% interval rule: a prediction times the ratios within which 80% of the held-out errors
fall, per metric.

The errors are those of ``servekit.perf.calibrate.leave_one_out``: each calibration point
predicted with the constants refitted without it (an out-of-sample spread; the calibration
residuals themselves, fitted on those very points, understate it). The interval is symmetric in
log space: ``exp(+-q)`` where ``q`` is the 80th percentile of |ln(measured / predicted)| (linear
interpolation between order statistics), so a bias of either sign on new sources is covered alike.
The same ratios serve the median and the p99 figures, which no calibration point measures apart.

``INTERVAL80`` holds the ratios ``bench/bench_perf_points.py --loo`` computed with the fitted
constants; it reports how often the evaluation points fall inside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

METRICS = ("output_throughput_tok_s", "ttft_ms", "tpot_ms")

INTERVAL80: dict[str, tuple[float, float]] = {
    "output_throughput_tok_s": (0.623, 1.605),
    "ttft_ms": (0.603, 1.658),
    "tpot_ms": (0.663, 1.508),
}

COVERAGE = 0.8


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` with linear interpolation between order statistics."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def interval_ratios(ratios: Sequence[float]) -> tuple[float, float]:
    """(10th, 90th percentile) of measured / predicted ratios (the in-sample spread)."""
    return quantile(ratios, 0.1), quantile(ratios, 0.9)


def symmetric_ratios(ratios: Sequence[float], coverage: float = COVERAGE) -> tuple[float, float]:
    """(1 / r, r) with ln r the ``coverage`` quantile of |ln(measured / predicted)|."""
    spread = quantile([abs(math.log(r)) for r in ratios], coverage)
    return math.exp(-spread), math.exp(spread)
