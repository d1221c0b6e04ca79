"""Every fitted number lists what it was fitted on (servekit.fit.calibration_data), its rule refits it
from those values, and the benchmark scores the points outside every calibration apart."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from servekit.fit.calibration import (
    BOUNDARY, CHECKED, MEDIAN, VISIBLE, Observation, boundary, fitted, refit, visible_points,
)
from servekit.fit.calibration_data import CALIBRATIONS
from servekit.fit.constants import CONSTANTS, MEASURED, constant
from servekit.fit.release_rules import RULES
from servekit.fit.versions import overridden_rules, rule

REPO = Path(__file__).resolve().parents[2]
CONSTANT_IDS = {c.id for c in CONSTANTS}


def test_every_calibration_names_a_known_number_once():
    targets = [cal.target for cal in CALIBRATIONS]
    assert len(targets) == len(set(targets))
    for cal in CALIBRATIONS:
        assert cal.observations and all(o.point and o.logged for o in cal.observations)
        if cal.rule_key is None:
            assert cal.target in CONSTANT_IDS, cal.target
        else:
            assert any((r.id, r.since) == cal.rule_key for r in RULES), cal.target


def test_every_measured_constant_is_fitted_on_listed_launches():
    calibrated = {cal.target: cal for cal in CALIBRATIONS}
    for c in CONSTANTS:
        if c.kind == MEASURED:
            assert c.id in calibrated and fitted(calibrated[c.id]), c.id


@pytest.mark.parametrize("cal", [c for c in CALIBRATIONS if c.refit == MEDIAN], ids=lambda c: c.target)
def test_each_constants_rule_refits_its_value_from_its_points(cal):
    assert refit(cal) == pytest.approx(constant(cal.target).value, abs=1e-12)


@pytest.mark.parametrize("cal", [c for c in CALIBRATIONS if c.refit == BOUNDARY], ids=lambda c: c.target)
def test_each_fitted_release_rule_refits_its_first_release(cal):
    assert refit(cal) == cal.rule_key[1]
    if cal.code_path is None:  # a rule placed on launches alone says so where it is defined
        (entry,) = [r for r in RULES if (r.id, r.since) == cal.rule_key]
        assert "no engine code path" in entry.source


def test_leaving_a_point_out_refits_without_it():
    sort = next(c for c in CALIBRATIONS if c.target == "sampler_bytes_per_logit_sort")
    assert refit(sort, without=f"{VISIBLE}:17") == pytest.approx(38.9)  # the lowest value held out
    assert refit(sort, without=f"{VISIBLE}:16") == pytest.approx(38.7)
    single = next(c for c in CALIBRATIONS if c.target == "comm_pcie_gib_after_setup")
    assert refit(single, without=single.points[0]) is None
    rise = next(c for c in CALIBRATIONS if c.target == "rule:non_torch@0.18")
    assert refit(rise, without=f"{VISIBLE}:44") is None  # nothing else shows the rise: the rule goes
    assert refit(rise, without=f"{VISIBLE}:43") == (0, 18)
    assert all(refit(c) is None for c in CALIBRATIONS if c.refit == CHECKED)


def test_a_boundary_is_the_lowest_release_from_which_every_value_sits_high():
    seen = [Observation("a", "", 0.13, (0, 15)), Observation("b", "", 0.25, (0, 17)),
            Observation("c", "", 0.13, (0, 18)), Observation("d", "", 0.26, (0, 19))]
    assert boundary(seen, (0.13, 0.25)) == (0, 19)
    assert boundary(seen[:3], (0.13, 0.25)) is None


def test_a_rule_left_out_or_moved_applies_inside_the_block_only():
    assert rule("non_torch", "0.18.0") == "non_torch_gib"
    with overridden_rules({("non_torch", (0, 18)): None}):
        assert rule("non_torch", "0.18.0") == "non_torch_gib_after_setup"
    with overridden_rules({("non_torch", (0, 18)): (0, 19)}):
        assert rule("non_torch", "0.18.0") == "non_torch_gib_after_setup" and rule("non_torch", "0.19.0") == "non_torch_gib"
    assert rule("non_torch", "0.18.0") == "non_torch_gib"
    with pytest.raises(KeyError):
        with overridden_rules({("non_torch", (0, 99)): None}):
            pass


def test_visible_calibration_points_are_the_launches_they_name(raw_points):
    by_id = dict(raw_points)
    for cal in CALIBRATIONS:
        for obs in cal.observations:
            if obs.point.startswith(VISIBLE + ":"):
                assert obs.point in by_id, obs.point
                assert by_id[obs.point]["model"].split(" ")[0] in obs.logged, (cal.target, obs.point)


def test_the_issue_named_points_are_calibration_points():
    """The sampler constants' activation peaks (points 16-18), the logs of points 15-19 and 30-44, and
    point 25 behind the PCIe term are all in the calibration set."""
    ids = {int(p.rsplit(":", 1)[1]) for p in visible_points(CALIBRATIONS)}
    assert {15, 16, 17, 18, 19, 25} | set(range(30, 45)) <= ids


def test_the_bench_scores_evaluation_and_calibration_apart_with_leave_one_out(raw_points):
    run = subprocess.run([sys.executable, str(REPO / "bench" / "bench_kv_points.py")],
                         capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert run.returncode in (0, 1), run.stderr
    evaluation = out.index("EVALUATION SET")
    calibration = out.index("CALIBRATION SET")
    loo = out.index("leave-one-out per fitted number")
    assert evaluation < calibration < loo
    ids_line = next(line for line in out[evaluation:calibration].splitlines() if line.strip().startswith("ids:"))
    evaluated = {f"{VISIBLE}:{n}" for n in ids_line.split(":", 1)[1].split()}
    assert evaluated and not evaluated & visible_points(CALIBRATIONS)
    for cal in CALIBRATIONS:
        assert cal.target in out[loo:]
    uncited = any(c.rule_key is not None and not c.code_path for c in CALIBRATIONS)
    assert ("[no engine code path cited]" in out[loo:]) == uncited
