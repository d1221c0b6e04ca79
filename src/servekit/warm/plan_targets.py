"""From the user's choices (as for ``servekit plan``) or an explicit command to engine launches.

The plan is synthesised in its engine-neutral vLLM form; the chosen engine is carried along
so pre-compile can translate (MAX) or compile (QAIC) from the same argv.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from servekit.errors import ServekitError
from servekit.warm.engine_steps import EngineTarget

ENGINES = ("vllm", "max", "vllm-qaic", "vllm-ascend")


@dataclass(frozen=True)
class PlanChoices:
    recipe_id: str
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    features: tuple[str, ...] = ()
    no_features: tuple[str, ...] = ()
    modes: Mapping[str, str] = field(default_factory=dict)
    engine: str = "vllm"
    catalog: str | None = None


@dataclass(frozen=True)
class ResolvedTargets:
    targets: tuple[EngineTarget, ...]
    hardware: str | None
    profile: Mapping[str, Any] | None
    description: str


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ServekitError(f"unknown engine {engine!r}", fix=f"use one of: {', '.join(ENGINES)}")
    return engine


def targets_from_plan(choices: PlanChoices) -> ResolvedTargets:
    from servekit.catalog.documents import read_documents, resolve_catalog_dir
    from servekit.synthesis.resolve import resolve_selection
    from servekit.synthesis.synthesize import synthesize

    engine = check_engine(choices.engine)
    docs = read_documents(resolve_catalog_dir(choices.catalog))
    selection = resolve_selection(
        docs,
        choices.recipe_id,
        hardware=choices.hardware,
        variant=choices.variant,
        strategy=choices.strategy,
        node_count=choices.nodes,
        enable=choices.features,
        disable=choices.no_features,
        modes=dict(choices.modes),
    )
    plan = synthesize(docs, selection)
    shared = {var.name: str(var.value) for var in plan.env}
    targets = tuple(
        EngineTarget(
            engine,
            tuple(str(w) for w in proc.argv()),
            {**shared, **{k: str(v) for k, v in proc.env_map().items()}},
            proc.role,
        )
        for proc in plan.processes
    )
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware)
    described = f"{selection.recipe_id} on {selection.hardware} ({selection.variant}, {selection.strategy})"
    return ResolvedTargets(targets, selection.hardware, profile, described)


def targets_from_command(command: str, engine: str = "vllm") -> ResolvedTargets:
    """An explicit launch (``vllm serve MODEL ...``) to warm for this machine."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ServekitError(f"--command cannot be parsed: {exc}") from None
    if not argv:
        raise ServekitError("--command is empty", fix="pass a launch such as 'vllm serve org/model'")
    return ResolvedTargets((EngineTarget(check_engine(engine), argv),), None, None, "the given command")
