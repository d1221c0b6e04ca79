"""The 80% interval rule: a prediction times the 10th and 90th percentiles of measured/predicted
over the calibration points (per metric, linear interpolation between order statistics; the same
ratios for the median and the p99 figures, which no calibration point measures apart).

``INTERVAL80`` holds the ratios ``servekit.perf.calibrate`` computed with the fitted constants;
``bench/bench_perf_points.py`` recomputes them and reports how often the evaluation points fall
inside.
"""

from __future__ import annotations

from collections.abc import Sequence

METRICS = ("output_throughput_tok_s", "ttft_ms", "tpot_ms")

INTERVAL80: dict[str, tuple[float, float]] = {
    "output_throughput_tok_s": (0.762, 1.621),
    "ttft_ms": (0.666, 1.927),
    "tpot_ms": (0.656, 1.354),
}


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
    """(10th, 90th percentile) of measured / predicted ratios."""
    return quantile(ratios, 0.1), quantile(ratios, 0.9)
