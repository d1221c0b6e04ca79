"""How well the assumed-memory rule prices a GPU that has no measured row, scored on the rows.

``servekit.hardware.device_memory.assumed_gib`` prices a part without a start-up log from its
datasheet size: less the sixteenth ECC keeps on data-centre GDDR, less what the vendor's measured
rows keep (``Reservation``: a least-squares line over nominal size). The measured rows are the
calibration set. For each row this prints the rule fitted on all rows, and leave-one-out: the line
refitted without that row, predicting it. The baseline is the rule it replaced, a fixed share of
the nominal size (31.4/32 from one RTX 5090 figure; 191.98/192 for AMD), scored on the same rows.
The measured rows of other vendors (TPU chips' HBM limits) are priced by NVIDIA's line, as their
vendors' unmeasured parts are, and printed as held-out checks of that assumption.

    PYTHONPATH=src python bench/bench_device_memory.py
"""

from __future__ import annotations

import statistics
import sys

from servekit.hardware.device_memory import (
    DEVICE_MEMORY,
    calibration_points,
    fit_reservation,
    memory_row,
    nominal_row,
)

BASELINE_SHARE = {"NVIDIA": 31.4 / 32, "AMD": 191.98 / 192}
"""The rule this one replaced: a fixed share of the nominal size per vendor."""


def _pct(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured * 100


def score(brand: str) -> list[tuple[str, float, bool, float, float, float, float]]:
    """(row id, nominal GB, ecc, measured GiB, fitted %, leave-one-out %, baseline %) per row."""
    points = calibration_points(brand)
    full = fit_reservation(brand, points)
    out = []
    for index, (row_id, nominal_gb, _kept) in enumerate(points):
        row, nominal = memory_row(row_id), nominal_row(row_id)
        assert row is not None and nominal is not None
        rest = fit_reservation(brand, points[:index] + points[index + 1:]) if len(points) > 1 else None
        fitted = full.seen_gib(nominal_gb, nominal.ecc)
        loo = _pct(rest.seen_gib(nominal_gb, nominal.ecc), row.memory_gib) if rest else float("nan")
        out.append((row_id, nominal_gb, nominal.ecc, row.memory_gib, _pct(fitted, row.memory_gib), loo,
                    _pct(nominal_gb * BASELINE_SHARE[brand], row.memory_gib)))
    return out


def main() -> int:
    for brand in ("NVIDIA", "AMD"):
        points = calibration_points(brand)
        full = fit_reservation(brand, points)
        print(f"{brand}: kept = {full.intercept_gib:.3f} GiB + {full.per_gb * 100:.3f}% of the nominal size "
              f"(fitted on {len(points)} measured row{'' if len(points) == 1 else 's'})")
        rows = score(brand)
        print(f"  {'row':<14}{'GB':>6}  ecc {'measured':>9} {'fitted':>8} {'LOO':>8} {'share':>8}")
        for row_id, nominal_gb, ecc, measured, fitted, loo, base in rows:
            print(f"  {row_id:<14}{nominal_gb:>6g}  {'yes' if ecc else ' - '} {measured:>9.2f} {fitted:>+7.2f}% "
                  f"{loo:>+7.2f}% {base:>+7.2f}%")
        loo_abs = [abs(r[5]) for r in rows if r[5] == r[5]]
        base_abs = [abs(r[6]) for r in rows]
        if loo_abs:
            print(f"  leave-one-out median |error| {statistics.median(loo_abs):.2f}% (max {max(loo_abs):.2f}%); "
                  f"the fixed share on the same rows {statistics.median(base_abs):.2f}% (max {max(base_abs):.2f}%); "
                  f"ratio {statistics.median(base_abs) / statistics.median(loo_abs):.1f}x")
        else:
            print("  one measured row: no leave-one-out score")
    others = [row for row in DEVICE_MEMORY if row.brand not in BASELINE_SHARE and nominal_row(row.id) is not None]
    if others:
        nvidia = fit_reservation("NVIDIA", calibration_points("NVIDIA"))
        print("other vendors' rows, priced by NVIDIA's line as their unmeasured parts are (not fitted on them):")
        for row in others:
            nominal = nominal_row(row.id)
            assert nominal is not None
            print(f"  {row.id:<14}{nominal.gb:>6g}  {row.brand:<8} {row.memory_gib:>9.2f} "
                  f"{_pct(nvidia.seen_gib(nominal.gb, nominal.ecc), row.memory_gib):>+7.2f}%")
    unpriced = [row.id for row in DEVICE_MEMORY if nominal_row(row.id) is None]
    if unpriced:
        print(f"rows without a datasheet size (not in the fit): {', '.join(unpriced)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
