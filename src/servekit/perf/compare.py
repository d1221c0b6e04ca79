"""Measured figures against a prediction: each one inside its 80% interval or not.

``measured`` and ``predicted`` are in the shape of ``servekit perf --format json``: output
throughput a number, TTFT and TPOT ``{"median": ..., "p99": ...}``; ``predicted["interval80"]``
the intervals in the same shape. An interval's bounds are inclusive; nothing here widens them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FIGURES: tuple[tuple[str, str | None], ...] = (
    ("output_throughput_tok_s", None),
    ("ttft_ms", "median"),
    ("ttft_ms", "p99"),
    ("tpot_ms", "median"),
    ("tpot_ms", "p99"),
)
"""(metric, statistic) of every compared figure; None: the metric is one number."""


def _pick(doc: Mapping[str, Any], metric: str, stat: str | None) -> Any:
    value = doc[metric]
    return value if stat is None else value[stat]


def figure_name(metric: str, stat: str | None) -> str:
    return metric if stat is None else f"{metric}.{stat}"


def compare_figure(measured: float, predicted: float, band: tuple[float, float] | list[float]) -> dict[str, Any]:
    lo, hi = float(band[0]), float(band[1])
    return {"measured": round(measured, 3), "predicted": round(predicted, 3), "interval80": [lo, hi],
            "inside": lo <= measured <= hi, "ratio": round(measured / predicted, 4) if predicted else None}


def compare(measured: Mapping[str, Any], predicted: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{figure name: {measured, predicted, interval80, inside, ratio}}`` for every figure of
    ``FIGURES`` (``ratio``: measured / predicted)."""
    bands = predicted["interval80"]
    return {figure_name(metric, stat): compare_figure(float(_pick(measured, metric, stat)),
                                                      float(_pick(predicted, metric, stat)),
                                                      _pick(bands, metric, stat))
            for metric, stat in FIGURES}


def all_inside(compared: Mapping[str, Mapping[str, Any]]) -> bool:
    return all(row["inside"] for row in compared.values())
