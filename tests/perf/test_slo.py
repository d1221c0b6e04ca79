"""``servekit plan --slo ... --workload ...``: the fewest-device layout meeting the targets, never
one that servekit's own fit check refuses."""

from __future__ import annotations

import json

import pytest

from servekit.app.fit import FitOptions, run_fit
from servekit.app.slo import SloOptions, candidates, parse_slo, parse_workload, search
from servekit.cli.app import main

MODEL = "Qwen/Qwen3.8-27B"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _fit_json(capsys, hardware: str, options: str) -> dict:
    code, out, _ = _run(capsys, "fit", MODEL, "--hardware", hardware, *options.split(), "--format", "json")
    doc = json.loads(out)
    assert code == (0 if doc["ok"] else 1)
    return doc


@pytest.mark.parametrize("hardware", ["h100", "rtx_5090_2x"])
def test_the_chosen_layout_passes_servekits_own_fit_check(capsys, hardware):
    code, out, _ = _run(capsys, "plan", MODEL, "--hardware", hardware, "--slo", "ttft_ms=5000,tpot_ms=500",
                        "--workload", "1024:512:8", "--format", "json")
    result = json.loads(out)
    assert code == 0 and result["met"] is True
    fit = _fit_json(capsys, hardware, result["options"])
    assert fit["ok"] is True and fit["report"]["fits"] is True


def test_no_smaller_layout_meets_it_and_refused_ones_are_skipped():
    opts = SloOptions(FitOptions(model=MODEL, hardware="rtx_5090_2x"), parse_slo("ttft_ms=2000,tpot_ms=200"),
                      parse_workload("1024:512:8"))
    result = search(opts)
    assert result["met"]
    smaller = [(v, layout) for v, layout in candidates(opts) if layout.devices < result["devices"]]
    for variant, layout in smaller:
        check, _ = run_fit(FitOptions(model=MODEL, hardware="rtx_5090_2x", variant=variant, strategy=layout.strategy,
                                      tp=layout.tp, nodes=layout.nodes))
        assert check.fits is not True, (variant, layout)  # a loose target: only a refusal can skip it
    assert result["candidates_tried"] > len(smaller) >= 1


def test_unmet_targets_name_what_binds_and_what_would_lift_it(capsys):
    code, out, _ = _run(capsys, "plan", MODEL, "--hardware", "h100", "--slo", "tpot_ms=1",
                        "--workload", "1024:1024:64", "--format", "json")
    result = json.loads(out)
    assert code == 1 and result["met"] is False
    unmet = result["unmet"]["tpot_ms"]
    assert unmet["best"] > 1 and unmet["binding"] and unmet["lift"]
    low, high = unmet["interval80"]
    assert low < unmet["best"] < high and unmet["within_reach"] is (low <= 1)


def test_a_looser_target_needs_no_more_devices(capsys):
    tight = search(SloOptions(FitOptions(model=MODEL, hardware="h100"), parse_slo("tpot_ms=25"),
                              parse_workload("1024:1024:64")))
    loose = search(SloOptions(FitOptions(model=MODEL, hardware="h100"), parse_slo("tpot_ms=80"),
                              parse_workload("1024:1024:64")))
    assert loose["met"]
    if tight["met"]:
        assert loose["devices"] <= tight["devices"]


@pytest.mark.parametrize("argv, words", [
    (["--slo", "ttft=5", "--workload", "1:1:1"], "KEY=MILLISECONDS"),
    (["--slo", "ttft_ms=5", "--workload", "1024:1024"], "INPUT:OUTPUT:CONCURRENCY"),
    (["--slo", "ttft_ms=5"], "--workload"),
])
def test_bad_options_are_one_clear_line(capsys, argv, words):
    code, _, err = _run(capsys, "plan", MODEL, "--hardware", "h100", *argv)
    assert code != 0 and words in err and "Traceback" not in err


def test_plan_with_a_workload_shows_its_expected_performance(capsys):
    code, out, _ = _run(capsys, "plan", MODEL, "--hardware", "h100", "--workload", "1024:1024:64")
    assert code == 0
    plan, perf = out.split("# expected performance at input:output:concurrency 1024:1024:64", 1)
    assert "--tensor-parallel-size 2" in plan and "TP 2 x PP 1" in perf and "binding:" in perf
    assert all(line.startswith("#") for line in perf.strip().splitlines()[1:])
    code, _, err = _run(capsys, "plan", MODEL, "--hardware", "h100", "--workload", "1024:1024:64", "--format", "json")
    assert code != 0 and "servekit perf" in err and "Traceback" not in err


LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def test_a_variant_that_cannot_run_on_the_hardware_is_never_a_candidate():
    """NVFP4 needs Blackwell, and NVIDIA's ModelOpt FP8 checkpoint is a format vLLM on TPU refuses:
    on a TPU neither is searched, and the layout chosen is one plan would emit."""
    opts = SloOptions(FitOptions(model=LLAMA, hardware="trillium"), parse_slo("ttft_ms=5000,tpot_ms=500"),
                      parse_workload("1024:256:8"))
    variants = {variant for variant, _ in candidates(opts)}
    assert "nvfp4" not in variants and "default" in variants
    result = search(opts)
    assert result["met"] and result["variant"] not in ("nvfp4", "nvidia_fp8")
    check, _ = run_fit(FitOptions(model=LLAMA, hardware="trillium", variant=result["variant"], tp=1))
    assert not any(f.code == "precision-quant-method" for f in check.findings)


@pytest.mark.parametrize("command", ["fit", "perf"])
def test_a_layout_the_user_names_still_runs_the_variants_precision_check(capsys, command):
    workload = ["--input-len", "256", "--output-len", "64", "--concurrency", "4"] if command == "perf" else []
    code, _, err = _run(capsys, command, LLAMA, "--hardware", "trillium", "--variant", "nvfp4",
                        "--strategy", "single_node_tp", "--tp", "1", *workload)
    assert code != 0 and "does not run on 'trillium'" in err and "Traceback" not in err


def test_a_modelopt_checkpoint_is_refused_on_a_tpu_and_served_on_hopper(capsys):
    code, out, _ = _run(capsys, "fit", LLAMA, "--hardware", "trillium", "--variant", "nvidia_fp8", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and not doc["ok"]
    codes = {f["code"] for f in doc["findings"]}
    assert "precision-quant-method" in codes
    code, out, _ = _run(capsys, "fit", LLAMA, "--hardware", "h100", "--variant", "nvidia_fp8", "--format", "json")
    assert "precision-quant-method" not in {f["code"] for f in json.loads(out)["findings"]}


def test_when_no_layout_can_be_priced_the_answer_says_why(capsys):
    """Cloud AI 100 has no speed row: the search says so rather than that nothing fits."""
    code, _, err = _run(capsys, "plan", LLAMA, "--hardware", "ai100_ultra", "--slo", "ttft_ms=500",
                        "--workload", "1024:256:8")
    assert code != 0 and "can be priced" in err and "no speed figures for 'ai100_ultra'" in err
    assert "Traceback" not in err


def test_a_met_target_says_how_sure_it_is_and_which_fewer_devices_may_meet_it(capsys):
    """The chosen layout's targets whose 80% interval reaches past the bound, and every fitting
    layout of fewer devices that missed at its prediction while each missed target's interval
    reaches under the bound: recomputed here from each smaller candidate's own ``perf``."""
    from servekit.app.perf import PerfOptions, run_perf
    from servekit.app.slo import _fit_options
    from servekit.errors import ServekitError

    slo = parse_slo("ttft_ms=700")
    opts = SloOptions(FitOptions(model=MODEL, hardware="h100"), slo, parse_workload("1024:256:16"))
    result = search(opts)
    assert result["met"]
    chosen = result["prediction"]
    low, high = chosen["interval80"]["ttft_ms"]["median"]
    assert chosen["ttft_ms"]["median"] <= 700 < high and result["at_risk"] == {"ttft_ms": [low, high]}
    expected = set()
    for variant, layout in candidates(opts):
        if layout.devices >= result["devices"]:
            continue
        try:
            pred = run_perf(PerfOptions(_fit_options(opts, variant, layout), opts.workload))
        except ServekitError:
            continue
        ttft, (lo, _) = pred["ttft_ms"]["median"], pred["interval80"]["ttft_ms"]["median"]
        if ttft > 700 and lo <= 700:
            expected.add((variant, layout.describe()))
    got = {(r["variant"], r["layout"]) for r in result["fewer_devices_within_reach"]}
    assert got == expected and got  # not vacuous: at least one smaller layout is within reach
    for row in result["fewer_devices_within_reach"]:
        missed = row["missed"]["ttft_ms"]
        assert row["devices"] < result["devices"] and missed["predicted"] > 700 >= missed["interval80"][0]
    code, out, _ = _run(capsys, "plan", MODEL, "--hardware", "h100", "--slo", "ttft_ms=700", "--workload", "1024:256:16")
    assert code == 0 and "reaches past 700" in out and "within the 80% interval" in out


def test_a_target_met_with_room_to_spare_is_not_flagged():
    opts = SloOptions(FitOptions(model=MODEL, hardware="h100"), parse_slo("ttft_ms=100000,tpot_ms=100000"),
                      parse_workload("1024:256:16"))
    result = search(opts)
    assert result["met"] and result["at_risk"] == {} and result["fewer_devices_within_reach"] == []
