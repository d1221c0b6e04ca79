"""The fitted constants: fitted on the named calibration points, and reproduced by the fit."""

from __future__ import annotations

import pytest

from servekit.perf.calibrate import fit_constants, intervals_from, prepare
from servekit.perf.constants import CALIBRATION_POINTS, CONSTANTS, FITTED, fitted_values
from servekit.perf.intervals import INTERVAL80


@pytest.fixture(scope="module")
def calibration(perf_points, profiles):
    ids = {p["id"] for p in perf_points}
    missing = [i for i in CALIBRATION_POINTS if i not in ids]
    assert not missing, f"calibration ids not in the visible file: {missing}"
    return prepare([p for p in perf_points if p["id"] in CALIBRATION_POINTS], profiles)


def test_calibration_is_a_subset_and_leaves_an_evaluation_set(perf_points):
    ids = [p["id"] for p in perf_points]
    assert len(set(CALIBRATION_POINTS)) == len(CALIBRATION_POINTS)
    assert 0 < len(CALIBRATION_POINTS) < len(ids) - 10


def test_stored_constants_are_the_fit(calibration, profiles):
    """One more round of the fit from the stored values moves none of them."""
    assert fit_constants(calibration, profiles, fitted_values(), rounds=1) == fitted_values()


def test_stored_intervals_are_the_calibration_residual_spread(calibration, profiles):
    got = intervals_from(calibration, profiles, fitted_values())
    for key, (lo, hi) in INTERVAL80.items():
        assert got[key][0] == pytest.approx(lo, abs=1e-3) and got[key][1] == pytest.approx(hi, abs=1e-3)


def test_every_fitted_constant_lies_on_its_grid():
    for c in CONSTANTS:
        if c.kind == FITTED:
            assert c.value in c.grid, c.id
