"""``fit`` and ``plan`` reach the same verdict for every bundled selection (recipe x variant x
hardware), because both check the plan's own launch through ``servekit.app.checks``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from servekit.app.fit import FitOptions, run_fit
from servekit.app.plan import plan, resolve
from servekit.app.request import PlanRequest, load_documents
from servekit.errors import ServekitError

DOCS = load_documents(None)
SELECTIONS = [
    (recipe_id, variant, hardware)
    for recipe_id, recipe in DOCS.recipes.items()
    for variant in (recipe.get("variants") or {"default": {}})
    for hardware in (DOCS.taxonomy.get("hardware_profiles") or {})
]


def _plan_verdict(recipe_id: str, variant: str, hardware: str):
    result = plan(PlanRequest(recipe_id, hardware=hardware, variant=variant, documents=DOCS))
    fit = (result.checks or {}).get("fit")
    return None if fit is None else (fit[0]["fits"], tuple(fit[0]["failed"]), result.plan.selection.variant)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SELECTIONS))
def test_fit_and_plan_agree(selection):
    recipe_id, variant, hardware = selection
    try:
        planned = _plan_verdict(recipe_id, variant, hardware)
    except ServekitError:
        assume(False)  # the selection does not plan on this hardware
    assume(planned is not None)
    check, context = run_fit(FitOptions(model=recipe_id, hardware=hardware, variant=variant))
    assert (check.fits, check.failed, context["variant"]) == planned


def test_rtx_5090_fit_checks_the_variant_the_plan_picks():
    request = PlanRequest("Qwen/Qwen3.8-27B", hardware="rtx_5090", documents=DOCS)
    chosen = resolve(DOCS, request, "Qwen/Qwen3.8-27B", None).variant
    check, context = run_fit(FitOptions(model="Qwen/Qwen3.8-27B", hardware="rtx_5090"))
    assert context["variant"] == chosen != "default"
    assert check.fits is True and context["checkpoint"] != "Qwen/Qwen3.8-27B"


def test_every_bundled_variant_is_covered_by_fit_all():
    from servekit.app.fit_all import FitAllOptions, fit_all

    rows = fit_all(FitAllOptions(hardware="h100", gpus=8))
    expected = {(r, v) for r, doc in DOCS.recipes.items() for v in (doc.get("variants") or {"default": {}})}
    assert {(row["recipe"], row["variant"]) for row in rows} == expected
    assert all(set(row) >= {"recipe", "variant", "fits", "tp", "max_model_len", "kv_tokens", "reason"} for row in rows)
    assert all(row["fits"] in (True, False, None) for row in rows)


def test_fit_all_reports_variants_plan_would_not_render_as_not_for_this_hardware():
    from servekit.app.fit_all import NOT_FOR_HARDWARE, FitAllOptions, fit_all

    rows = {(row["recipe"], row["variant"]): row for row in fit_all(FitAllOptions(hardware="h100", gpus=8))}
    ascend = rows[("Qwen/Qwen3.8-27B", "ascend_w8a8")]
    assert ascend["fits"] is False and ascend["reason"] == NOT_FOR_HARDWARE and ascend["tp"] is None
    for (recipe_id, variant), row in rows.items():
        request = PlanRequest(recipe_id, hardware="h100", variant=variant, documents=DOCS)
        try:
            resolve(DOCS, request, recipe_id, variant)
            renders = True
        except ServekitError:
            renders = False
        assert (row["reason"] != NOT_FOR_HARDWARE) == renders, (recipe_id, variant)


@pytest.mark.parametrize("codes,failed", [
    (("tp-attention-heads",), ("divisibility",)),
    (("fit-weights",), ("memory",)),
    (("precision-nvfp4", "fit-context"), ("precision", "memory")),
    (("world-size",), ("devices",)),
])
def test_failed_checks_are_named_for_what_failed(codes, failed):
    from servekit.findings import Finding
    from servekit.fit.api import FitCheck

    check = FitCheck(report=None, findings=tuple(Finding("error", code, "x") for code in codes))
    assert check.failed == failed and check.fits is False
    assert ("DOES NOT FIT" in check.verdict) == (failed == ("memory",))


def test_unknown_weights_are_unknown_never_fits():
    from servekit.facts import shipped_facts
    from dataclasses import replace
    from servekit.fit import check_plan_fit

    facts = replace(shipped_facts("meta-llama/Llama-3.1-8B-Instruct"), weights=None)
    profile = DOCS.taxonomy["hardware_profiles"]["h100"]
    check = check_plan_fit(facts, profile, hardware_name="h100", argv=["--max-model-len", "8192"])
    assert check.fits is None and check.verdict.startswith("unknown")
