"""What each container runs: the plan's own vLLM argv, or another engine's translation of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from servekit.engines.common.command_line import option_value
from servekit.engines.plan_translate import translate_plan
from servekit.engines.registry import get_engine
from servekit.errors import ServekitError
from servekit.records import record
from servekit.synthesis.plan import Plan, Process

NATIVE_ENGINE = "vllm"


@record
class ServerCommand:
    """One process of the plan as a container will run it."""

    process: Process
    argv: tuple[str, ...]
    env: dict[str, Any]
    image: str | None
    precompile: tuple[str, ...] = ()
    """Shell commands that must finish before the server starts (ahead-of-time compiles)."""
    health_path: str = "/health"
    """The path that answers 200 once the server serves (the engine's ``LaunchSpec.readiness_path``)."""

    @property
    def port(self) -> int:
        value = option_value(self.argv, "--port")
        if value is not None and value.isdigit():
            return int(value)
        return self.process.port or 8000


def _native(plan: Plan) -> list[ServerCommand]:
    plan_env = plan.env_map()
    return [ServerCommand(p, tuple(str(t) for t in p.argv()), {**plan_env, **p.env_map()}, plan.docker.image)
            for p in plan.processes]


def _translated(plan: Plan, engine: str, profile: Any) -> list[ServerCommand]:
    raw = profile if isinstance(profile, Mapping) else getattr(profile, "raw", None)
    commands = translate_plan(plan, engine, hardware=raw)
    out = []
    for process, translated in zip(plan.processes, commands):
        command = translated.command
        errors = [str(f) for f in command.findings if getattr(f, "severity", "") == "error"]
        if errors:
            raise ServekitError(f"{engine} cannot run this plan: {errors[0]}", fix="see `servekit plan --engine "
                                f"{engine}` for every finding")
        steps = tuple(step.command() for step in command.precompile)
        out.append(ServerCommand(process, tuple(command.argv), dict(command.env),
                                 command.image or plan.docker.image, steps))
    return out


def health_path(engine: str) -> str:
    """The readiness path of the engine's server (``Engine.launch``)."""
    return get_engine(engine).launch.readiness_path


def server_commands(plan: Plan, profile: Any) -> list[ServerCommand]:
    """One ServerCommand per plan process, in plan order."""
    engine = plan.selection.engine
    commands = _native(plan) if engine == NATIVE_ENGINE else _translated(plan, engine, profile)
    for command in commands:
        if not command.image:
            raise ServekitError(f"the plan for {plan.selection.hardware} with {engine} has no container image "
                                f"({plan.docker.source or 'none known'})",
                                fix="pass --image IMAGE to name one, or pin docker_image for this hardware in the recipe")
    path = health_path(engine)
    return [replace(command, health_path=path) for command in commands]
