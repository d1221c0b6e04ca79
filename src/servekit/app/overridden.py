"""A plan with a person's own values over the recipe's (``plan --tp 4 --image ...``).

The overrides go into the vLLM plan before it is translated and checked (``PlanRequest.overrides``,
applied by ``servekit.app.plan``), so the engine's form, the fit checks, the layout choice and
the provenance all see them.
"""

from __future__ import annotations

import dataclasses

from servekit.app.plan import PlanResult, plan
from servekit.app.request import PlanRequest
from servekit.synthesis.overrides import Overrides, checked


def plan_with_overrides(request: PlanRequest, overrides: Overrides) -> PlanResult:
    """``plan(request)`` with ``overrides`` applied; without any, exactly ``plan(request)``.

    A plan without a recipe is laid out with ``--tp`` and ``--pp`` from the start (the request
    carries them), so only the other overrides are applied over it (``servekit.app.plan``)."""
    checked(overrides)
    return plan(dataclasses.replace(
        request, overrides=overrides, tp=overrides.tp if overrides.tp is not None else request.tp,
        pp=overrides.pp if overrides.pp is not None else request.pp))
