"""A plan explained for people, as a script they can paste: what runs, with which image and env,
on which machine, and why each flag is there."""

from __future__ import annotations

import json
from typing import Any

from servekit.errors import SelectionError
from servekit.synthesis import shell
from servekit.synthesis.docker import docker_command, ray_node_docker, ray_ready_command
from servekit.synthesis.env import MACHINE_ENV
from servekit.synthesis.images import moved_paths
from servekit.synthesis.nodes import node_env
from servekit.synthesis.plan import Plan, Process
from servekit.synthesis.script import Install, Part, Script, Step, text_lines


def why(source: str) -> str:
    """A short reason for a provenance key."""
    parts = source.split(".")
    if source.startswith(("override: ", "fit: ")):
        return source
    if source.startswith("features."):
        if ".modes." in source:
            return f"feature {parts[1]}, mode {parts[3]}" + (
                f" (on {parts[5]})" if ".hardware_overrides." in source else "")
        return f"feature {parts[1]}" + (f" (on {parts[3]})" if ".hardware_overrides." in source else "")
    if source.startswith("variants."):
        if ".hardware_overrides." in source:
            return f"variant {parts[1]} on {parts[3]}"
        if source.endswith(".vram_minimum_gb"):
            return f"variant {parts[1]}: one GPU when vram_minimum_gb allows, else the whole node"
        return f"variant {parts[1]}"
    if source.startswith("strategies/"):
        return f"strategy {source.split('/', 1)[1].split('.')[0]}"
    if source.startswith("strategy_overrides."):
        return f"recipe override for strategy {parts[1]}"
    if source.startswith("hardware_overrides."):
        return f"recipe override for {parts[1]} hardware"
    if source.startswith("model."):
        return "recipe base arguments" if source.endswith("base_args") else "recipe model settings"
    if source.startswith(("kv_store/", "taxonomy.kv_offload")):
        return "KV offload option"
    if source.startswith("taxonomy.hardware_profiles"):
        return "whole node (GPU count)"
    return source


def header_lines(plan: Plan, *, engine_neutral: bool = True) -> list[str]:
    """The summary at the top: what is planned, the model, features, image and minimum version."""
    sel = plan.selection
    lines = [f"{sel.recipe_id} on {sel.hardware}: variant {sel.variant}, strategy {sel.strategy}, "
             f"{sel.node_count} node(s), {plan.deploy_type}",
             f"model: {plan.model_id}",
             f"features: {', '.join(sel.features) or '(none)'}"]
    if sel.kv_offload:
        lines.append(f"kv offload: {sel.kv_offload}")
    if engine_neutral:
        lines.append(f"image: {plan.docker.image}  ({plan.docker.source})")
        if plan.min_version:
            lines.append(f"min vLLM version: {plan.min_version}  ({', '.join(plan.min_version_sources)})")
    return lines


def _install(plan: Plan, docker: bool) -> tuple[Install, ...]:
    steps = []
    for step in plan.install:
        steps.append(Install.of(step, docker))
    return tuple(steps)


def _env(plan: Plan, proc: Process) -> dict[str, tuple[Any, str]]:
    """The process's env: the plan's, its own, and the node's address where the plan spans nodes."""
    env = {var.name: (var.value, why(var.source)) for var in plan.env}
    env.update({var.name: (var.value, why(var.source)) for var in (*proc.env, *node_env(plan, proc))})
    return env


def why_lines(proc: Process) -> tuple[str, ...]:
    out = []
    for arg in proc.args:
        shown = " ".join(shell.quote(t) for t in arg.tokens())
        out.append(f"{shown[:60]}{'…' if len(shown) > 60 else ''}  <- {why(arg.source)} [{arg.source}]")
    return tuple(out)


def _title(plan: Plan, proc: Process, index: int, count: int) -> str:
    if plan.deploy_type == "multi_node" and count > 1:
        return f"machine {index + 1} of {count}: {proc.role}, node rank {proc.rank}"
    name = proc.role if proc.rank == 0 else f"{proc.role.replace('_node', '')} (node rank {proc.rank})"
    return name if count == 1 else f"{index + 1} of {count}: {name}"


RAY_HEAD_TITLE = "Ray's head, which the other nodes join"


def _companions(plan: Plan, docker: bool) -> tuple[Step, ...]:
    steps = tuple(Step(f"{c['label']}: {c['description']}".rstrip(": "), c["command"], background=True)
                  for c in plan.extra("companions") or ())
    ray_head = plan.extra("ray_head_argv")
    if ray_head and not docker:
        steps += (Step(f"{RAY_HEAD_TITLE} (ray start returns once it runs)",
                       " ".join(shell.quote(w) for w in ray_head), with_env=True),)
    return steps


def served_model(plan: Plan) -> str:
    """The model the plan's head serves (what every node of the Ray form loads)."""
    head = plan.role("head") or plan.processes
    return str(head[0].model or "")


RAY_CONTAINER_TITLE = f"{RAY_HEAD_TITLE}, in the container the server then runs in; then wait until it answers"


def _ray_docker_part(plan: Plan, proc: Process, title: str, env: dict[str, Any], before: tuple[Step, ...]) -> Part:
    """A node of the Ray form in containers (``servekit.synthesis.docker.ray_node_docker``)."""
    ray_head = plan.extra("ray_head_argv") if proc.model is not None else None
    first, command = ray_node_docker(plan.docker, proc.argv(), env, proc.port or 8000, len(proc.program),
                                     served_model(plan), ray_head)
    steps = (*before, Step(RAY_CONTAINER_TITLE, f"{first}\n{ray_ready_command()}")) if first else before
    return Part(title, command, (), steps, why_lines(proc) + _moved(plan, proc))


def _moved(plan: Plan, proc: Process) -> tuple[str, ...]:
    """Why the docker form names a file otherwise than the plan (``servekit.synthesis.images.moved_paths``)."""
    return moved_paths(plan.docker.image, proc.argv()[len(proc.program):])


def _process_part(plan: Plan, proc: Process, title: str, docker: bool) -> Part:
    env = _env(plan, proc)
    flags = proc.flags()
    before = _companions(plan, docker) if proc is plan.processes[0] else ()
    if docker:
        values = {k: v for k, (v, _) in env.items()}
        if plan.extra("ray_head_argv"):
            return _ray_docker_part(plan, proc, title, values, before)
        if proc.model is None:
            raise SelectionError(f"the {proc.role} of this plan runs {' '.join(proc.program)}, which has no docker form "
                                 "here", fix="leave out --docker, or install the engine on each node")
        command = docker_command(plan.docker, proc.argv(), values, proc.port or 8000, len(proc.program))
        return Part(title, command, (), before, why_lines(proc) + _moved(plan, proc))
    words = tuple((k, _env_word(k, v), reason) for k, (v, reason) in env.items())
    command = shell.command(" ".join(shell.quote(t) for t in proc.command_words()), flags)
    activate = any(s.kind == "pip" and "activate" in s.command for s in plan.install)
    return Part(title, command, words, before, why_lines(proc), activate)


def _env_word(name: str, value: Any) -> str:
    """The shell word an export gives ``name``; a machine's own setting wins (``MACHINE_ENV``)."""
    word = shell.quote_word(shell.text(value))
    return f"${{{name}:-{word}}}" if name in MACHINE_ENV and shell.quote(word) == word else word


def _service_parts(plan: Plan) -> list[tuple[str, str]]:
    """(title, command) of the services around the servers: Mooncake master and store, router."""
    out = []
    master, store = plan.extra("master"), plan.extra("store")
    if master:
        out.append(("mooncake master", master["command"]))
    if store:
        out.append(("mooncake store", store["command"]))
    router: dict[str, Any] = dict(plan.router or ())
    if router.get("command"):
        out.append(("router", router["command"]))
    return out


def plan_script(plan: Plan, *, docker: bool = False) -> Script:
    """The plan as a ``Script``: install steps, then one part per machine or process."""
    if docker and plan.docker.image is None:
        raise SelectionError(f"this plan has no container image on {plan.selection.hardware} "
                             f"({plan.docker.source or 'none known'}), so no docker form",
                             fix="pass --image IMAGE to name one, or leave out --docker")
    services = _service_parts(plan)
    count = len(plan.processes) + len(services)
    parts = [_process_part(plan, p, _title(plan, p, i, count), docker) for i, p in enumerate(plan.processes)]
    offset = len(parts)
    parts += [Part(title if count == 1 else f"{offset + i + 1} of {count}: {title}", command)
              for i, (title, command) in enumerate(services)]
    files = ()
    if plan.extra("mooncake_config"):
        files = (("Mooncake config, written to $MOONCAKE_CONFIG_PATH", "$MOONCAKE_CONFIG_PATH",
                  json.dumps(plan.extra("mooncake_config"), indent=2)),)
    return Script(tuple(header_lines(plan)), _install(plan, docker), tuple(parts), files,
                  tuple(f"note: {note}" for note in plan.notes))


def explain(plan: Plan, *, docker: bool = False) -> list[str]:
    """Plain text lines describing a plan (the CLI adds colour); each is a comment or a command."""
    return text_lines(plan_script(plan, docker=docker))
