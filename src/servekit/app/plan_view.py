"""A planned result as the JSON document, the text plan and the POSIX script ``servekit plan`` prints.

The text plan is a script a person can paste: every line is a comment or a command. A plan
for another engine shows that engine's own install steps, image and commands.
"""

from __future__ import annotations

from typing import Any

from servekit.app.checks import check_lines
from servekit.app.plan import PlanResult
from servekit.engines.plan_view import render_engine_plan
from servekit.errors import SelectionError
from servekit.synthesis.explain import header_lines, plan_script
from servekit.synthesis.render import render_plan, servekit_extras
from servekit.synthesis.script import Install, Part, Script, Step, posix_script, text_lines

CANNOT_START = "this plan cannot start as it stands; see the checks and their fixes"


def plan_payload(result: PlanResult) -> dict[str, Any]:
    """The rendering object (in the engine's form for a translated plan) with servekit's own
    facts under ``servekit``: provenance, install steps, engine commands, checks."""
    payload = render_plan(result.plan)
    extras = servekit_extras(result.plan)
    if result.commands is not None:
        payload = render_engine_plan(payload, list(result.commands), result.engine)
        extras["engine_commands"] = [pc.to_dict() for pc in result.commands]
    if result.checks is not None:
        extras["checks"] = result.checks
    payload["servekit"] = extras
    return payload


def engine_errors(result: PlanResult) -> list[Any]:
    """The error findings of a translated plan's commands (the plan cannot run as it stands)."""
    return [f for pc in result.commands or () for f in pc.command.findings if f.severity == "error"]


def _engine_install(result: PlanResult, docker: bool, version: str | None) -> tuple[Install, ...]:
    from servekit.engines.user_install import user_install

    declared = user_install(result.engine)
    if declared is None:
        return ()
    image = next((pc.command.image for pc in result.commands or () if pc.command.image), None)
    steps = []
    for step in declared.for_version(version):
        runs = step.kind == "prerequisite" or (step.kind == "docker") == docker
        command = f"docker pull {image}" if step.kind == "docker" and image else step.command
        steps.append(Install(step.kind, command, step.note, runs))
    return tuple(steps)


def _engine_part(pc: Any, title: str) -> Part:
    from servekit.engines.common.render import render_multiline
    from servekit.synthesis.shell import quote_word

    cmd = pc.command
    before = tuple(Step(f"before start: {s.description}", s.command()) for s in cmd.precompile)
    why = [f"image: {cmd.image}"] if cmd.image else []
    for item in cmd.untranslated:
        shown = f" {item.value}" if item.value is not None else ""
        why.append(f"not carried over: {item.flag}{shown} <- {item.reason}")
    why += [str(f) for f in cmd.findings]
    env = tuple((name, quote_word(value), "") for name, value in cmd.env.items())
    return Part(title, render_multiline(cmd.argv), env, before, tuple(why))


def _engine_script(result: PlanResult, docker: bool, version: str | None) -> Script:
    if docker:
        raise SelectionError(f"the docker form is shown for vLLM plans only, not {result.engine}",
                             fix="leave out --docker; the plan names the engine's image and its docker pull step")
    commands = list(result.commands or ())
    count = len(commands)
    parts = []
    for i, pc in enumerate(commands):
        name = f"{pc.command.engine}: {pc.role}" + (f" (rank {pc.rank})" if pc.rank else "")
        parts.append(_engine_part(pc, name if count == 1 else f"{i + 1} of {count}: {name}"))
    header = [*header_lines(result.plan, engine_neutral=False),
              f"{result.engine} plan: the recipe's vLLM plan in {result.engine}'s own form"]
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
