"""``servekit fit`` through the application layer: engines come from the registry, and a
recipe's launch is the one the planning pipeline renders."""

from __future__ import annotations

import json

import pytest
from testing.model_configs import CONFIGS, DENSE_GQA, dense_tensors, write_config_dir, write_header_only

from servekit.app.fit import FitOptions, run_fit
from servekit.app.plan import plan
from servekit.app.request import PlanRequest
from servekit.cli.app import main
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


def _verdicts(capsys, model: str, hardware: str, extra: list[str]) -> tuple[tuple, tuple]:
    main(["plan", model, "--hardware", hardware, "--format", "json", *extra])
    planned = json.loads(capsys.readouterr().out)["servekit"]["checks"]["fit"][0]
    main(["fit", model, "--hardware", hardware, "--format", "json", *extra])
    fitted = json.loads(capsys.readouterr().out)

    def key(doc: dict) -> tuple:
        report = doc.get("report") or {}
        return doc["fits"], tuple(doc["failed"]), report.get("kv_tokens"), report.get("weights_gib_per_rank")

    return key(planned), key(fitted)


@pytest.mark.parametrize(("name", "headers"), [*((name, False) for name in sorted(CONFIGS)), ("dense-gqa", True)])
def test_fit_dir_and_plan_dir_reach_one_verdict(capsys, tmp_path, name, headers):
    """The same facts (weights estimated from config.json when no header is there), the same
    layout, the same numbers, with and without the user's own --tp."""
    folder = write_config_dir(tmp_path / name, CONFIGS[name])
    if headers:
        write_header_only(folder / "model.safetensors", dense_tensors(DENSE_GQA))
    for hardware in ("h100", "rtx_5090"):
        for extra in ([], ["--tp", "2"]):
            planned, fitted = _verdicts(capsys, str(folder), hardware, extra)
            assert planned == fitted, (hardware, extra)
            assert planned[0] is not None
