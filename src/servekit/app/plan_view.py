"""A planned result as the JSON document ``servekit plan --format json`` prints (the text plan
and the POSIX script are ``servekit.app.plan_text``'s). A plan for another engine shows that
engine's own install steps, image and commands.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.app.plan import PlanResult
from servekit.engines.plan_view import render_engine_plan
from servekit.engines.registry import get_engine
from servekit.engines.user_install import user_install
from servekit.synthesis.docker import RayNode, docker_argv, docker_command, ray_docker_keys
from servekit.synthesis.plan import InstallStep
from servekit.synthesis.render import install_json, render_plan, servekit_extras

CANNOT_START = "this plan cannot start as it stands; see the checks and their fixes"


def plan_payload(result: PlanResult, version: str | None = None) -> dict[str, Any]:
    """The rendering object (in the engine's form for a translated plan) with servekit's own
    facts under ``servekit``: provenance, install steps, engine commands, checks."""
    payload = render_plan(result.plan)
    extras = servekit_extras(result.plan)
    if result.commands is not None:
        payload = render_engine_plan(payload, list(result.commands), result.engine)
        payload.update(_engine_docker_fields(result))
        extras["engine_commands"] = [pc.to_dict() for pc in result.commands]
        steps = engine_install(result, version)
        if steps is not None:
            extras["install"] = install_json(steps)
            extras["provenance"]["install"] = {"steps": [{"kind": s.kind, "family": s.family, "source": s.source}
                                                         for s in steps]}
    if result.checks is not None:
        extras["checks"] = result.checks
    payload["servekit"] = extras
    return payload


def engine_errors(result: PlanResult) -> list[Any]:
    """The error findings of a translated plan's commands (the plan cannot run as it stands)."""
    return [f for pc in result.commands or () for f in pc.command.findings if f.severity == "error"]


def engine_install(result: PlanResult, version: str | None = None) -> tuple[InstallStep, ...] | None:
    """A translated plan's install steps as its engine declares them for the plan's platform
    family (the family of the plan's own pip step), the docker step pulling the engine's image;
    None when the engine declares none."""
    declared = user_install(result.engine)
    if declared is None:
        return None
    image = next((pc.command.image for pc in result.commands or () if pc.command.image), None)
    family = next((s.family for s in result.plan.install if s.family), None)
    steps = []
    for step in declared.for_version(version, family):
        command = f"docker pull {image}" if step.kind == "docker" and image else step.command
        steps.append(InstallStep(step.kind, command, step.note, step.source))
    if runs_vllm(result.engine):  # a vLLM plugin or fork: the recipe's own extra packages apply too
        steps += [s for s in result.plan.install if s.kind not in ("prerequisite", "pip", "docker")]
    return tuple(steps)


def runs_vllm(engine: str) -> bool:
    """The engine runs vLLM itself on its platform (a plugin or fork: ``Engine.vllm_platforms``)."""
    return bool(get_engine(engine).vllm_platforms)


def engine_docker(result: PlanResult, pc: Any) -> tuple[str, list[Any]] | None:
    """The ``docker run`` form (shell text, argv) of one engine command: the plan's container
    rules, the engine's image, the command placed for that image's entrypoint, the port the
    engine listens on published; None without an image."""
    cmd = pc.command
    if cmd.image is None:
        return None
    engine = get_engine(cmd.engine)
    program = len(engine.split_command(list(cmd.argv)).program)
    words = [str(w) for w in cmd.argv]
    given = words[words.index("--port") + 1] if "--port" in words[:-1] else ""
    port = int(given) if given.isdigit() else engine.launch.default_port
    docker = replace(result.plan.docker, image=cmd.image)
    return (docker_command(docker, list(cmd.argv), dict(cmd.env), port, program, engine.images),
            docker_argv(docker, list(cmd.argv), dict(cmd.env), port, program, engine.images))


def engine_docker_command(result: PlanResult, pc: Any) -> str | None:
    form = engine_docker(result, pc)
    return form[0] if form else None


def _ray_docker_fields(result: PlanResult) -> dict[str, Any]:
    """The Ray form's containers in the engine's image and env (``servekit.synthesis.render``'s keys)."""
    commands = list(result.commands or ())
    if not commands or any(pc.command.image is None for pc in commands):
        return {}
    plan = result.plan
    model = str(next((p.model for p in plan.processes if p.model is not None), ""))
    nodes = []
    for pc in commands:
        process = next(p for p in plan.processes if p.role == pc.role and p.rank == pc.rank)
        nodes.append(RayNode(replace(plan.docker, image=pc.command.image), tuple(pc.command.argv),
                             dict(pc.command.env), len(process.program), process.model is not None))
    return ray_docker_keys(nodes, model, plan.extra("ray_head_argv"))


def _engine_docker_fields(result: PlanResult) -> dict[str, Any]:
    """The engine's docker forms under the rendering object's keys (one server, or head and workers)."""
    if result.plan.extra("ray_head_argv"):
        return _ray_docker_fields(result)
    forms = [(pc, engine_docker(result, pc)) for pc in result.commands or ()]
    if not forms or any(form is None for _, form in forms):
        return {}
    if len(forms) == 1:
        return {"docker_command": forms[0][1][0], "docker_argv": forms[0][1][1]}
    heads = [form for pc, form in forms if pc.role == "head"]
    workers = [form for pc, form in forms if pc.role == "worker"]
    if len(heads) != 1 or len(heads) + len(workers) != len(forms):
        return {}
    return {"head_docker_command": heads[0][0], "head_docker_argv": heads[0][1],
            "worker_docker_commands": [w[0] for w in workers], "worker_docker_argvs": [w[1] for w in workers]}
