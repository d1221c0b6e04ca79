"""One rank's memory as the builder page draws it: a segment per memory term against the budget.

The figures are the fit report ``servekit plan`` and ``servekit fit`` print (``FitReport`` as
JSON: ``budget_gib = weights + activation + runtime + CUDA graphs + runner buffers + KV``); this
module only lays them out (segment positions on a 0..``WIDTH`` scale) and writes them for people
(GiB with two decimals, tokens with thousands separators).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servekit.records import record

WIDTH = 1000.0
"""The chart's scale in SVG user units (the SVG stretches to its box)."""
TERMS = (("weights", "weights_gib_per_rank", "Weights"), ("activations", "activation_gib", "Activations"),
         ("cudagraphs", "cudagraph_gib", "CUDA graphs"), ("buffers", "buffers_gib", "Runner buffers"),
         ("runtime", "runtime_gib", "Runtime"), ("kv", "available_kv_gib", "KV cache pool"))
"""(key, fit report field, label) of each memory term, in the order the engine takes memory."""


@record
class Segment:
    key: str
    label: str
    gib: float
    x: float
    width: float

    @property
    def shown(self) -> str:
        return gib(self.gib)


@record
class MemoryChart:
    """One rank's memory terms laid out on one bar; ``over`` is what does not fit the budget."""

    segments: tuple[Segment, ...]
    budget_gib: float
    budget_x: float
    over_gib: float
    facts: tuple[tuple[str, str], ...]
    source: str = ""
    """Where the device's memory figure comes from."""

    @property
    def spare_gib(self) -> float:
        """Budget no term of the plan takes (an engine whose memory plan leaves some unassigned)."""
        return max(self.budget_gib - sum(s.gib for s in self.segments), 0.0)

    @property
    def summary(self) -> str:
        """The chart in words (its SVG title, for screen readers)."""
        terms = ", ".join(f"{s.label.lower()} {s.shown}" for s in self.segments)
        over = f"; {gib(self.over_gib)} over the budget" if self.over_gib > 0 else ""
        return f"Memory per rank against a budget of {gib(self.budget_gib)}: {terms}{over}"


def gib(value: float) -> str:
    return f"{value:,.2f} GiB"


def tokens(value: Any) -> str:
    return f"{int(value):,} tokens"


def _facts(report: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    rows = [("Budget per device", f"{gib(float(report['budget_gib']))}"
             + (f" of {gib(float(report['device_memory_gib']))}" if report.get("device_memory_gib") else "")),
            ("Parallel layout", f"TP {report.get('tp', 1)} × PP {report.get('pp', 1)}"),
            ("Context length", tokens(report.get("max_model_len") or 0)),
            ("KV cache dtype", str(report.get("kv_cache_dtype") or "auto")),
            ("KV cache pool", tokens(report.get("kv_tokens") or 0)),
            ("Requests at full context", f"{float(report.get('max_concurrency') or 0):,.2f}"),
            ("Longest context that fits", tokens(report.get("longest_context") or 0)),
            ("KV bytes per token per rank", f"{float(report.get('kv_bytes_per_token') or 0):,.0f} B")]
    return tuple(rows)


def memory_chart(report: Mapping[str, Any] | None) -> MemoryChart | None:
    """The chart of one fit report (its JSON form); None without one."""
    if not report or report.get("budget_gib") is None:
        return None
    budget = float(report["budget_gib"])
    values = [(key, label, max(float(report.get(field) or 0.0), 0.0)) for key, field, label in TERMS]
    used = sum(v for _, _, v in values)
    scale = WIDTH / max(budget, used, 1e-9)
    segments, x = [], 0.0
    for key, label, value in values:
        segments.append(Segment(key, label, value, round(x, 2), round(value * scale, 2)))
        x += value * scale
    return MemoryChart(tuple(segments), budget, round(budget * scale, 2), max(used - budget, 0.0), _facts(report),
                       str(report.get("device_memory_source") or ""))
