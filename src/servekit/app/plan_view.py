"""A planned result as the JSON document, the text plan and the POSIX script ``servekit plan`` prints.

The text plan is a script a person can paste: every line is a comment or a command. A plan
for another engine shows that engine's own install steps, image and commands.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.app.checks import check_lines
from servekit.app.run_site import engine_release
from servekit.app.plan import PlanResult
from servekit.engines.plan_view import render_engine_plan
from servekit.engines.registry import get_engine
from servekit.engines.user_install import user_install
from servekit.errors import SelectionError
from servekit.engines.common.render import render_multiline
from servekit.synthesis.docker import docker_argv, docker_command
from servekit.synthesis.explain import header_lines, plan_script, why_lines
from servekit.synthesis.shell import quote_word
from servekit.synthesis.plan import InstallStep
from servekit.synthesis.render import install_json, render_plan, servekit_extras
from servekit.synthesis.script import Install, Part, Script, Step, posix_script, text_lines

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
    if _runs_vllm(result.engine):  # a vLLM plugin or fork: the recipe's own extra packages apply too
        steps += [s for s in result.plan.install if s.kind not in ("prerequisite", "pip", "docker")]
    return tuple(steps)


def _runs_vllm(engine: str) -> bool:
    return bool(get_engine(engine).vllm_platforms)


def _installs_vllm(engine: str) -> bool:
    """A vLLM plugin installed beside a vLLM release of its own (vllm-ascend), so vLLM's minimum applies."""
    chosen = get_engine(engine)
    pinned = chosen.user_install.default_version if chosen.user_install else None
    return bool(chosen.vllm_platforms) and engine_release(pinned) is not None


def _engine_install(result: PlanResult, docker: bool, version: str | None) -> tuple[Install, ...]:
    steps = engine_install(result, version) or ()
    return tuple(Install(s.kind, s.command, s.note, s.kind == "prerequisite" or (s.kind == "docker") == docker,
                         s.source or None) for s in steps)


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


def _engine_docker_fields(result: PlanResult) -> dict[str, Any]:
    """The engine's docker forms under the rendering object's keys (one server, or head and workers)."""
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
    if docker:
        command = engine_docker_command(result, pc)
        if command is None:
            raise SelectionError(f"the {cmd.engine} plan has no container image on {result.plan.selection.hardware}, "
                                 "so no docker form", fix="pass --image IMAGE to name one, or leave out --docker")
        return Part(title, command, (), before, tuple(why))
    env = tuple((name, quote_word(value), "") for name, value in cmd.env.items())
    return Part(title, render_multiline(cmd.argv), env, before, tuple(why))


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
