"""From the user's choices (as for ``servekit plan``) or an explicit command to engine launches to warm.

The plan comes from the planning pipeline in its engine-neutral vLLM form; the chosen engine is
carried along so pre-compile can translate or compile from the same argv.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from servekit.app.engine_choice import checked_engine
from servekit.app.plan import plan
from servekit.app.request import PlanRequest, load_documents
from servekit.errors import ServekitError
from servekit.records import record
from servekit.synthesis.plan import Plan
from servekit.warm.engine_steps import EngineTarget


@record
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
    """The launches of the plan the request describes, each tagged with the request's engine.
    MODEL is whatever ``servekit plan`` takes: a recipe or checkpoint id, or a model no recipe
    names (a local model directory: nothing to download, its files are checked where they are)."""
    engine = checked_engine(request.engine)
    result = plan(replace(request, checks=False), translate=False)
    selection = result.selection
    docs = request.documents or load_documents(request.catalog, "")
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware)
    described = f"{selection.recipe_id} on {selection.hardware} ({selection.variant}, {selection.strategy})"
    return ResolvedTargets(_targets(result.plan, engine), selection.hardware, profile, described)


def targets_from_command(command: str, engine: str = "vllm") -> ResolvedTargets:
    """An explicit launch (``vllm serve MODEL ...``) to warm for this machine."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ServekitError(f"--command cannot be parsed: {exc}") from None
    if not argv:
        raise ServekitError("--command is empty", fix="pass a launch such as 'vllm serve org/model'")
    return ResolvedTargets((EngineTarget(checked_engine(engine), argv),), None, None, "the given command")
