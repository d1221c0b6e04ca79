"""A planned result as the text plan and the POSIX script ``servekit plan`` prints.

The text plan is a script a person can paste: every line is a comment or a command. A plan
for another engine shows that engine's own install steps, image and commands. Apart from the
JSON form (``servekit.app.plan_view``), so that a JSON plan does not import the script writer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.app.checks import check_lines
from servekit.app.plan import PlanResult
from servekit.app.plan_view import engine_docker_command, engine_errors, engine_install, runs_vllm
from servekit.app.run_site import engine_release
from servekit.engines.common.render import render_multiline
from servekit.engines.registry import get_engine
from servekit.errors import SelectionError
from servekit.synthesis.docker import ray_node_docker, ray_ready_command
from servekit.synthesis.explain import (
    RAY_CONTAINER_TITLE, RAY_HEAD_TITLE, header_lines, plan_script, served_model, why_lines,
)
from servekit.synthesis.nodes import node_env
from servekit.synthesis.script import Install, Part, Script, Step, posix_script, text_lines
from servekit.synthesis.shell import quote, quote_word


def _installs_vllm(engine: str) -> bool:
    """A vLLM plugin installed beside a vLLM release of its own (vllm-ascend), so vLLM's minimum applies."""
    chosen = get_engine(engine)
    pinned = chosen.user_install.default_version if chosen.user_install else None
    return bool(chosen.vllm_platforms) and engine_release(pinned) is not None


def _engine_install(result: PlanResult, docker: bool, version: str | None) -> tuple[Install, ...]:
    steps = engine_install(result, version) or ()
    return tuple(Install.of(s, docker) for s in steps)


def _engine_env(result: PlanResult, pc: Any, process: Any) -> dict[str, Any]:
    """The command's env; where the engine runs vLLM itself and the plan spans nodes, each node's own
    address too (``VLLM_HOST_IP``, as the vLLM plan sets it)."""
    env: dict[str, Any] = dict(pc.command.env)
    if process is not None and runs_vllm(result.engine):
        env.update({var.name: var.value for var in node_env(result.plan, process)})
    return env


def _ray_engine_part(result: PlanResult, pc: Any, process: Any, title: str, before: tuple[Step, ...],
                     why: tuple[str, ...]) -> Part:
    """A node of the Ray form in the engine's containers (``servekit.synthesis.docker.ray_node_docker``)."""
    cmd = pc.command
    if cmd.image is None:
        raise SelectionError(f"the {cmd.engine} plan has no container image on {result.plan.selection.hardware}, "
                             "so no docker form", fix="pass --image IMAGE to name one, or leave out --docker")
    docker = replace(result.plan.docker, image=cmd.image)
    is_head = process is not None and process.model is not None
    program = len(process.program) if process is not None else 2
    first, command = ray_node_docker(docker, list(cmd.argv), _engine_env(result, pc, process), 8000, program,
                                     served_model(result.plan), result.plan.extra("ray_head_argv") if is_head else None)
    steps = (*before, Step(RAY_CONTAINER_TITLE, f"{first}\n{ray_ready_command()}")) if first else before
    return Part(title, command, (), steps, why)


def _engine_part(result: PlanResult, pc: Any, title: str, docker: bool) -> Part:
    cmd = pc.command
    before = tuple(Step(f"before start: {s.description}", s.command()) for s in cmd.precompile)
    why = [f"image: {cmd.image}"] if cmd.image else []
    for item in cmd.untranslated:
        shown = f" {item.value}" if item.value is not None else ""
        why.append(f"not carried over: {item.flag}{shown} <- {item.reason}")
    why += [str(f) for f in cmd.findings]
    process = next((p for p in result.plan.processes if p.role == pc.role and p.rank == pc.rank), None)
    if process is not None and [str(t) for t in process.argv()] == [str(t) for t in cmd.argv]:
        why += why_lines(process)  # the engine runs vLLM's own command line: the recipe keys explain it
    ray_head = result.plan.extra("ray_head_argv")
    if docker and ray_head:
        return _ray_engine_part(result, pc, process, title, before, tuple(why))
    if docker:
        command = engine_docker_command(result, pc)
        if command is None:
            raise SelectionError(f"the {cmd.engine} plan has no container image on {result.plan.selection.hardware}, "
                                 "so no docker form", fix="pass --image IMAGE to name one, or leave out --docker")
        return Part(title, command, (), before, tuple(why))
    if ray_head and process is not None and process.role == "head":
        before += (Step(f"{RAY_HEAD_TITLE} (ray start returns once it runs)", " ".join(quote(w) for w in ray_head),
                        with_env=True),)
    env = tuple((name, quote_word(value), "") for name, value in _engine_env(result, pc, process).items())
    return Part(title, render_multiline(cmd.argv, quote=quote), env, before, tuple(why))


def _engine_script(result: PlanResult, docker: bool, version: str | None) -> Script:
    commands = list(result.commands or ())
    count = len(commands)
    parts = []
    for i, pc in enumerate(commands):
        name = f"{pc.command.engine}: {pc.role}" + (f" (rank {pc.rank})" if pc.rank else "")
        parts.append(_engine_part(result, pc, name if count == 1 else f"{i + 1} of {count}: {name}", docker))
    header = [*header_lines(result.plan, engine_neutral=False),
              f"{result.engine} plan: the recipe's vLLM plan in {result.engine}'s own form"]
    if _installs_vllm(result.engine) and result.plan.min_version:
        header.append(f"min vLLM version: {result.plan.min_version}  ({', '.join(result.plan.min_version_sources)})")
    return Script(tuple(header), _engine_install(result, docker, version), tuple(parts),
                  trailer=tuple(f"note: {n}" for n in result.plan.notes))


def plan_as_script(result: PlanResult, *, docker: bool = False, version: str | None = None) -> Script:
    """The plan as a script; the checks close it as comments."""
    if result.commands is not None:
        script = _engine_script(result, docker, version)
    else:
        script = plan_script(result.plan, docker=docker)
    if result.checks is not None and not engine_errors(result):
        checks = ("## checks", *(f"# {line}" for line in check_lines(result.checks)))
        script = Script(script.header, script.install, script.parts, script.files,
                        script.trailer + checks)
    return script


def plan_lines(result: PlanResult, *, docker: bool = False, version: str | None = None) -> list[str]:
    """Text lines for people, each a comment or a command: headings start with ``#``, reasons follow ``<-``."""
    return text_lines(plan_as_script(result, docker=docker, version=version))


def plan_sh(result: PlanResult, *, docker: bool = False, version: str | None = None) -> str:
    """One POSIX shell script (``sh plan.sh install``, then ``sh plan.sh RANK`` per machine)."""
    return posix_script(plan_as_script(result, docker=docker, version=version))
