"""A plan with a person's own values over the recipe's (``plan --tp 4 --image ...``).

The overrides go into the vLLM plan before it is translated and checked, so the engine's
form, the fit checks and the provenance all see them.
"""

from __future__ import annotations

import dataclasses

from servekit.app.checks import plan_checks
from servekit.app.engine_choice import translates
from servekit.app.plan import PlanResult, plan
from servekit.app.request import PlanRequest, load_documents
from servekit.synthesis.overrides import Overrides, apply_overrides, checked


def plan_with_overrides(request: PlanRequest, overrides: Overrides) -> PlanResult:
    """``plan(request)`` with ``overrides`` applied; without any, exactly ``plan(request)``.

    A plan without a recipe is laid out with ``--tp`` and ``--pp`` from the start (the request
    carries them), so only the other overrides are applied over it."""
    checked(overrides)
    request = dataclasses.replace(request, tp=overrides.tp if overrides.tp is not None else request.tp,
                                  pp=overrides.pp if overrides.pp is not None else request.pp)
    if not overrides:
        return plan(request)
    base = plan(dataclasses.replace(request, checks=False))
    if not base.from_recipe:
        overrides = dataclasses.replace(overrides, tp=None, pp=None)
        if not overrides:
            return plan(request)
    docs = request.documents or load_documents(request.catalog, base.selection.recipe_id)
    changed = apply_overrides(base.plan, overrides)
    commands = None
    if translates(changed.selection.engine):
        from servekit.engines.plan_translate import translate_plan

        profile = (docs.taxonomy.get("hardware_profiles") or {}).get(changed.selection.hardware)
        commands = tuple(translate_plan(changed, changed.selection.engine, hardware=profile,
                                        options=request.engine_options.as_options(),
                                        engine_version=overrides.vllm_version))
    checks = (plan_checks(docs, changed, flags=True, vllm_version=overrides.vllm_version, site=request.site)
              if request.checks else None)
    return PlanResult(base.selection, changed, commands, checks, from_recipe=base.from_recipe)
