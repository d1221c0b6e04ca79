"""What each fitted number of the memory model was fitted on, and the rule that fits it.

A constant read from measurements (``servekit.fit.constants``: kind MEASURED), a constant checked
against launches, and a release rule placed where launches showed a change
(``servekit.fit.release_rules``) are all fitted numbers. Each ``Calibration`` lists the launches
it was fitted on or checked against, as ``Observation`` entries with their point id (``FILE:LINE``
of a kv-points file, ``servekit.fit.point_table.point_id``) or the named public log, and, where
it was fitted, the per-launch value in the constant's unit. Its ``refit`` rule is the rule the
constant states, as code:

* ``MEDIAN``: the median of the per-launch values, rounded half up to ``step`` (in ``unit``),
  times ``scale`` to the constant's own unit;
* ``BOUNDARY``: a release rule's first release: the lowest release from which every observed
  value lies nearer the rule's level than the level before it (``levels``); no such observation
  leaves the rule out;
* ``CHECKED``: a value from code or a stated assumption, only checked against the launches
  (nothing to refit).

The kv-points ids of every calibration form the calibration set; every other point is the
evaluation set (``bench/bench_kv_points.py`` reports them apart, with a leave-one-out refit per
calibration: ``refit(cal, without=point)``). The table itself is ``servekit.fit.calibration_data``.
"""

from __future__ import annotations

import statistics
from decimal import ROUND_HALF_UP, Decimal

from servekit.records import record

MEDIAN = "median"
BOUNDARY = "release boundary"
CHECKED = "checked only"
VISIBLE = "kv-points-visible.jsonl"
"""File name of the shared reference points; ``VISIBLE:N`` is its N-th line."""


@record
class Observation:
    point: str
    """A kv-points id (``kv-points-visible.jsonl:16``) or a named public log."""
    logged: str
    """What the launch logged, and how the value follows from it."""
    value: float | None = None
    """The per-launch value in the calibration's unit; None for a launch only checked against."""
    release: tuple[int, ...] | None = None
    """The vLLM release of the launch (for a ``BOUNDARY`` refit)."""


@record
class Calibration:
    target: str
    """A constant id, or ``rule:ID@RELEASE`` for the entry of a release rule that starts there."""
    refit: str
    observations: tuple[Observation, ...]
    unit: str = ""
    step: float = 0.0
    scale: float = 1.0
    levels: tuple[float, float] | None = None
    """For ``BOUNDARY``: the value before the rule and the rule's own value."""
    code_path: str | None = None
    """For a release rule: the engine code path it cites; None: no code path (measurements only)."""

    @property
    def rule_key(self) -> tuple[str, tuple[int, ...]] | None:
        """(rule id, first release) of a release rule's calibration; None for a constant."""
        if not self.target.startswith("rule:"):
            return None
        rule_id, since = self.target[len("rule:"):].split("@", 1)
        return rule_id, tuple(int(n) for n in since.split("."))

    @property
    def points(self) -> tuple[str, ...]:
        return tuple(o.point for o in self.observations)


def visible_points(calibrations: tuple[Calibration, ...], prefix: str = VISIBLE) -> set[str]:
    """Ids of the kv-points a calibration was fitted on or checked against, in one file."""
    return {p for cal in calibrations for p in cal.points if p.startswith(prefix + ":")}


def _half_up(x: float, step: float) -> float:
    if not step:
        return x
    steps = Decimal(repr(round(x / step, 9))).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return float(steps) * step


def refit(cal: Calibration, without: str | None = None) -> float | tuple[int, ...] | None:
    """The calibration's number fitted again without the observation of point ``without``: a
    constant's value (``MEDIAN``), a rule's first release (``BOUNDARY``, None: no observation shows
    the change, the rule is left out); None for ``CHECKED``, or when no observation is left."""
    kept = [o for o in cal.observations if o.point != without]
    if cal.refit == MEDIAN:
        values = [o.value for o in kept if o.value is not None]
        if not values:
            return None
        return round(_half_up(statistics.median(values), cal.step) * cal.scale, 12)
    if cal.refit == BOUNDARY:
        return boundary(kept, cal.levels or (0.0, 1.0))
    return None


def boundary(observations: list[Observation], levels: tuple[float, float]) -> tuple[int, ...] | None:
    """The lowest release from which every observation lies nearer ``levels[1]`` than ``levels[0]``."""
    before, after = levels
    dated = sorted((o.release, o.value) for o in observations if o.release is not None and o.value is not None)
    found = None
    for release, value in reversed(dated):
        if abs(value - after) >= abs(value - before):
            break
        found = release
    return found


def fitted(cal: Calibration) -> bool:
    """Whether a calibration refits its number from the observations (not only checks it)."""
    return cal.refit in (MEDIAN, BOUNDARY)
