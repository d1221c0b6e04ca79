"""``servekit fit`` through the application layer: engines come from the registry, and a
recipe's launch is the one the planning pipeline renders."""

from __future__ import annotations

import pytest

from servekit.app.fit import FitOptions, run_fit
from servekit.app.plan import plan
from servekit.app.request import PlanRequest
from servekit.engines.registry import engine_names
from servekit.errors import SelectionError
from servekit.fit.planner import engine_choices
from servekit.synthesis.render import render_plan


def test_fit_engines_are_the_registrys_and_the_cpu_rule():
    assert set(engine_names()) < set(engine_choices())
    with pytest.raises(SelectionError, match="unknown engine 'bogus'") as caught:
        run_fit(FitOptions("Qwen/Qwen3.8-27B", "h200", engine="bogus"))
    assert all(name in str(caught.value.fix) for name in engine_choices())


def test_fit_checks_the_launch_the_plan_renders():
    _, context = run_fit(FitOptions("Qwen/Qwen3.8-27B", "h200"))
    planned = render_plan(plan(PlanRequest("Qwen/Qwen3.8-27B", hardware="h200", checks=False)).plan)
    assert context["argv"] == [str(a) for a in planned["argv"]]
