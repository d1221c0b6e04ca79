"""From the user's choices (as for ``servekit plan``) or an explicit command to engine launches to warm.

The plan comes from the planning pipeline in its engine-neutral vLLM form; the chosen engine is
carried along so pre-compile can translate or compile from the same argv.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from servekit.app.engine_choice import checked_engine
from servekit.app.plan import plan_from_selection, select
from servekit.app.request import PlanRequest, find_model
from servekit.errors import ServekitError
from servekit.synthesis.plan import Plan
from servekit.warm.engine_steps import EngineTarget


@dataclass(frozen=True)
class ResolvedTargets:
    targets: tuple[EngineTarget, ...]
    hardware: str | None
    profile: Mapping[str, Any] | None
    description: str


def _targets(plan: Plan, engine: str) -> tuple[EngineTarget, ...]:
    shared = {var.name: str(var.value) for var in plan.env}
    return tuple(
        EngineTarget(
            engine,
            tuple(str(w) for w in proc.argv()),
            {**shared, **{k: str(v) for k, v in proc.env_map().items()}},
            proc.role,
        )
        for proc in plan.processes
    )


def targets_from_plan(request: PlanRequest) -> ResolvedTargets:
    """The launches of the plan the request describes, each tagged with the request's engine."""
    engine = checked_engine(request.engine)
    docs, recipe_id, variant = find_model(request)
    selection = select(docs, request, recipe_id, variant)
    plan = plan_from_selection(docs, selection, translate=False, checks=False).plan
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware)
    described = f"{selection.recipe_id} on {selection.hardware} ({selection.variant}, {selection.strategy})"
    return ResolvedTargets(_targets(plan, engine), selection.hardware, profile, described)


def targets_from_command(command: str, engine: str = "vllm") -> ResolvedTargets:
    """An explicit launch (``vllm serve MODEL ...``) to warm for this machine."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ServekitError(f"--command cannot be parsed: {exc}") from None
    if not argv:
        raise ServekitError("--command is empty", fix="pass a launch such as 'vllm serve org/model'")
    return ResolvedTargets((EngineTarget(checked_engine(engine), argv),), None, None, "the given command")
