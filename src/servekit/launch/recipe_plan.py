"""A recipe's synthesized plan as a ``LaunchPlan``: each engine process in its engine's form,
with the exact ``docker run`` command of its container form, then the router and companions.

The container of an engine process listens on the port its ``-p`` publishes (``--port`` is part
of the command inside), and the Hugging Face cache mount keeps ``~`` for the shell to expand."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from servekit.engines.registry import get_engine
from servekit.launch.companion_plan import companion_processes, plan_files, router_process
from servekit.launch.launch_plan import ENGINE, LaunchPlan, LaunchProcess, served_name_of, without_host_port
from servekit.launch.local_model import features_of
from servekit.synthesis.docker import docker_argv
from servekit.synthesis.plan import Plan
from servekit.synthesis.shell import quote_word

DEFAULT_PORT = 8000


def _finding_dicts(command: Any) -> list[dict[str, Any]]:
    return [{"severity": f.severity, "code": f.code, "message": f.message, "fix": f.fix}
            for f in command.findings]


def _docker_command(plan: Plan, argv: Sequence[str], env: Mapping[str, str], image: str | None, port: int,
                    engine: str) -> str:
    docker = replace(plan.docker, image=image or plan.docker.image)
    if docker.image is None:
        return ""
    chosen = get_engine(engine)
    program = len(chosen.split_command(list(argv)).program)
    words = [str(w) for w in docker_argv(docker, [*argv, "--port", str(port)], dict(env), port, program or 2,
                                         chosen.images)]
    return " ".join(quote_word(w) for w in words)


def launch_plan_of(plan: Plan, commands: Sequence[Any] | None, port: int | None = None,
                   env: Mapping[str, str] | None = None) -> LaunchPlan:
    """``commands`` are the plan's processes translated into a non-native engine (None: native);
    ``port`` is where a single server's container serves (default: the port the plan gives it);
    ``env`` is set for every process over the plan's own (``up --env``), in the container form too."""
    extra = dict(env or {})
    shared = {var.name: str(var.value) for var in plan.env}
    processes, dockers, findings = [], [], []
    for index, proc in enumerate(plan.processes):
        vllm_argv = without_host_port([str(w) for w in proc.argv()])
        env = {**shared, **{k: str(v) for k, v in proc.env_map().items()}}
        argv, image = vllm_argv, plan.docker.image
        if commands is not None:
            launch = commands[index].command
            argv, image = tuple(str(w) for w in launch.argv), launch.image or image
            env = {**env, **dict(launch.env)}
            findings += _finding_dicts(launch)
        env = {**env, **extra}
        processes.append(LaunchProcess(proc.role, tuple(argv), env, vllm_argv, ENGINE, proc.port))
        served = port if port is not None and len(plan.processes) == 1 else proc.port or DEFAULT_PORT
        engine = commands[index].command.engine if commands is not None else plan.selection.engine
        dockers.append(_docker_command(plan, argv, env, image, served, engine))
    sel = plan.selection
    first = processes[0]
    router = router_process(plan)
    companions = tuple(replace(p, env={**p.env, **extra}) for p in companion_processes(plan))
    routers = (replace(router, env={**router.env, **extra}),) if router else ()
    return LaunchPlan(
        engine=sel.engine, model=plan.model_id, served_name=served_name_of(first.vllm_argv, plan.model_id),
        processes=(*companions, *processes, *routers), hardware=sel.hardware,
        source=f"recipe {sel.recipe_id} ({sel.variant}, {sel.strategy}) for {sel.hardware}",
        image=plan.docker.image, features=tuple(dict.fromkeys((*sel.features, *features_of(first.vllm_argv)))),
        docker_commands=tuple(d for d in dockers if d), findings=tuple(findings), files=plan_files(plan),
    )
