"""A plan's fit check follows the memory rules of the vLLM release it targets (``--vllm-version``)
and the launch's own environment, as ``fit --points`` does for a logged launch."""

from __future__ import annotations

import dataclasses

from servekit.app.checks import known_facts, process_checks
from servekit.app.overridden import plan_with_overrides
from servekit.app.plan import plan
from servekit.app.request import PlanRequest, load_documents
from servekit.fit.versions import counts_cudagraphs
from servekit.synthesis.overrides import Overrides
from servekit.synthesis.plan import EnvVar

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _report(version: str | None) -> dict:
    result = plan_with_overrides(PlanRequest(MODEL, hardware="h100"), Overrides(vllm_version=version))
    (head,) = result.checks["fit"]
    return head["report"]


def test_an_older_release_is_planned_under_its_own_rules():
    newest, old = _report(None), _report("0.10.1")
    assert not counts_cudagraphs("0.10.1") and counts_cudagraphs(None)
    assert newest["cudagraph_gib"] > 0 and old["cudagraph_gib"] == 0
    # 0.10 sampled the dummy batch with FlashInfer (no sort): a smaller activation peak
    assert old["activation_gib"] < newest["activation_gib"]
    assert old["kv_tokens"] > newest["kv_tokens"]
    assert old["weights_gib_per_rank"] == newest["weights_gib_per_rank"]


def test_the_plans_env_reaches_the_memory_rules():
    """VLLM_USE_FLASHINFER_SAMPLER=0 in the plan's env sends 0.10's dummy sampler down the
    native path, which holds more bytes per logit than FlashInfer's."""
    result = plan(PlanRequest(MODEL, hardware="h100", checks=False))
    docs = load_documents(None, result.selection.recipe_id)
    facts = known_facts(result.plan.model_id)
    switched = dataclasses.replace(
        result.plan, env=(*result.plan.env, EnvVar("VLLM_USE_FLASHINFER_SAMPLER", "0", "test")))
    ((_, plain),) = process_checks(docs, result.plan, facts, vllm_version="0.10.1")
    ((_, native),) = process_checks(docs, switched, facts, vllm_version="0.10.1")
    assert native.report.activation_gib > plain.report.activation_gib
    assert native.report.kv_tokens < plain.report.kv_tokens
