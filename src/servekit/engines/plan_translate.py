"""Apply an engine to a synthesized Plan: one EngineLaunch per vLLM process.

``translate_plan(plan, engine, hardware=profile)`` keeps synthesis engine-neutral: the Plan holds
vLLM launches, and this module hands each one (its argv, the plan's and the process's env, the
plan's image) to the engine's translation.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from typing import Any

from servekit.engines.common.findings import ERROR, Finding, finding
from servekit.engines.common.render import render_multiline
from servekit.engines.common.translation import DialectContext, EngineLaunch
from servekit.engines.registry import engine_names, get_engine, native_engine
from servekit.records import record
from servekit.synthesis.apply_overrides import image_named

SERVE_PROGRAM = ("vllm", "serve")
"""The program of a plan's server processes (plans are written in vLLM's form)."""


@record
class ProcessCommand:
    role: str
    rank: int
    command: EngineLaunch

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "rank": self.rank, **self.command.to_dict()}


def dialect_names() -> list[str]:
    """Engines that translate a vLLM plan into another form (every engine but the native one)."""
    native = native_engine().id
    return [name for name in engine_names() if name != native]


def translate_plan(
    plan: Any,
    engine: str,
    *,
    hardware: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    engine_version: str | None = None,
) -> list[ProcessCommand]:
    """Every process of ``plan`` in ``engine``'s form; ``hardware`` is the taxonomy profile."""
    chosen = get_engine(engine)
    plan_env = {var.name: str(var.value) for var in plan.env}
    serving = [p for p in plan.processes if tuple(p.program) == SERVE_PROGRAM]
    out = []
    for process in plan.processes:
        env = {**plan_env, **{var.name: str(var.value) for var in process.env}}
        context = DialectContext(
            hardware=hardware,
            hardware_id=plan.selection.hardware,
            env=env,
            image=plan.docker.image,
            image_named=image_named(plan.docker),
            engine_version=engine_version,
            options=dict(options or {}),
        )
        if tuple(process.program) != SERVE_PROGRAM and serving:
            command = _beside_the_server(chosen, process, serving[0], context)
        else:
            command = chosen.translate([str(token) for token in process.argv()], context)
        if chosen.single_process and len(plan.processes) > 1:
            command = _with_finding(
                command,
                finding(
                    ERROR,
                    "engine.multi-process",
                    f"{chosen.id} serves from one process; this plan is {plan.deploy_type} "
                    f"with {len(plan.processes)} processes",
                    fix="pick a single-node strategy",
                ),
            )
        out.append(ProcessCommand(process.role, process.rank, command))
    return out


def _beside_the_server(chosen: Any, process: Any, server: Any, context: DialectContext) -> EngineLaunch:
    """A process of the plan that is no vLLM server (a Ray node's ``ray start``). An engine that runs
    vLLM itself on its platform (``Engine.vllm_platforms``: vLLM Ascend, vLLM on Qualcomm Cloud AI)
    runs it as written, with the env and image it gives the server; another engine's servers do not
    join a Ray cluster, so its form of the plan is an error."""
    argv = tuple(str(token) for token in process.argv())
    if chosen.vllm_platforms:
        served = chosen.translate([str(token) for token in server.argv()], context)
        return EngineLaunch(engine=served.engine, argv=argv, env=served.env, image=served.image)
    return EngineLaunch(engine=chosen.id, argv=argv, env=dict(context.env), image=context.image, findings=(
        finding(ERROR, "engine.ray-form", f"this plan's nodes join through Ray ({' '.join(process.program)} on "
                f"the {process.role}), a vLLM form {chosen.id} has no counterpart of",
                fix=f"leave out --engine {chosen.id}, or choose a strategy whose nodes use the engine's own "
                    "rendezvous"),))


def explain_commands(commands: list[ProcessCommand]) -> list[str]:
    """Text lines for a terminal: per process the image, env, pre-steps, command, leftovers, findings."""
    lines: list[str] = []
    for pc in commands:
        cmd = pc.command
        lines.append(f"# {cmd.engine}: {pc.role}" + (f" (rank {pc.rank})" if pc.rank else ""))
        if cmd.image:
            lines.append(f"image: {cmd.image}")
        lines += [f"export {name}={shlex.quote(value)}" for name, value in cmd.env.items()]
        for step in cmd.precompile:
            lines.append(f"# before start: {step.description}")
            lines.append(step.command())
        lines.append(render_multiline(cmd.argv))
        for item in cmd.untranslated:
            shown = f" {item.value}" if item.value is not None else ""
            lines.append(f"not carried over: {item.flag}{shown} <- {item.reason}")
        for f in cmd.findings:
            lines.append(str(f))
    return lines


def _with_finding(command: EngineLaunch, extra: Finding) -> EngineLaunch:
    return dataclasses.replace(command, findings=(*command.findings, extra))
