"""A planned result as the builder page's answer: the verdict, the checks, the command and every
artifact form, the install steps, per-rank memory and the reason for each argument.

Every text shown comes from what ``servekit plan`` prints for the same request: the JSON
document (``servekit.app.plan_view.plan_payload``), the text and sh forms (``plan_lines``,
``plan_sh``), the docker form (the plan checked as it runs in its container, as ``--docker``
does) and the Kubernetes documents (``servekit.app.k8s_plan``). The verdict is the CLI's exit
status: the page never judges a plan by rules of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from servekit.app.k8s_plan import plan_k8s_text, plan_manifests
from servekit.app.plan import PlanResult
from servekit.app.plan_text import plan_lines, plan_sh
from servekit.app.plan_view import CANNOT_START, engine_errors, plan_payload
from servekit.errors import ServekitError
from servekit.k8s.cli_glue import options_from_cli
from servekit.records import record
from servekit.synthesis.render import process_command
from servekit.warm.hub import HubSettings
from servekit.web.checks_view import Check, all_checks, attach
from servekit.web.memory_chart import MemoryChart, memory_chart

READY = "no check stops it; it can start as it stands"


@record
class Line:
    text: str
    marks: tuple[int, ...] = ()
    """Numbers of the checks about this line (``Check.number``)."""


@record
class Block:
    """One copyable text: a command, a script, a config."""

    key: str
    title: str
    text: str
    lines: tuple[Line, ...] = ()
    checks: tuple[Check, ...] = ()
    note: str = ""
    source: str = ""
    """The page (or recipe key) an install step follows."""

    @property
    def source_url(self) -> str:
        word = self.source.split(" ", 1)[0]
        return word if word.startswith("https://") else ""

    def numbered(self) -> tuple[Line, ...]:
        return self.lines or tuple(Line(t) for t in self.text.split("\n"))


@record
class Form:
    """One tab of the answer: a title and its blocks, or a note saying why there are none."""

    key: str
    title: str
    blocks: tuple[Block, ...]
    note: str = ""


@record
class Reason:
    process: str
    arg: str
    source: str


@record
class RankMemory:
    role: str
    ok: bool
    verdict: str
    chart: MemoryChart | None
    checks: tuple[Check, ...]


@record
class PlanSections:
    facts: tuple[tuple[str, str], ...]
    starts: bool
    verdict: str
    checks: tuple[Check, ...]
    forms: tuple[Form, ...]
    install: tuple[Form, ...]
    memory: tuple[RankMemory, ...]
    fit_note: str
    reasons: tuple[Reason, ...]
    notes: tuple[str, ...]
    env: tuple[tuple[str, str], ...]

    @property
    def errors(self) -> int:
        return sum(1 for c in self.checks if c.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for c in self.checks if c.severity == "warning")

    @property
    def serious(self) -> tuple[Check, ...]:
        """The errors and warnings (the notes are shown where they belong, and under a summary)."""
        return tuple(c for c in self.checks if c.severity != "note")

    @property
    def remarks(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.severity == "note")


def _text(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        return value["command"]
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _numbered(key: str, title: str, values: Any, first: int) -> Iterator[Block]:
    for number, value in enumerate(values or [], first):
        yield Block(f"{key}-{number}", f"{title} (machine {number})", _text(value))


def command_blocks(payload: dict[str, Any]) -> tuple[list[Block], list[Block]]:
    """(commands, docker forms) of a rendering object, per machine and role."""
    commands: list[Block] = []
    docker: list[Block] = []
    if isinstance(payload.get("command"), str):
        commands.append(Block("command", "Command", payload["command"]))
    if payload.get("ray_head_command"):  # the Ray form: Ray's head starts on machine 1 before the server
        commands.append(Block("ray-head", "Ray's head (machine 1, first)", payload["ray_head_command"]))
    if payload.get("head_command"):
        commands.append(Block("head", "Head (machine 1)", payload["head_command"]))
        commands += _numbered("worker", "Worker", payload.get("worker_commands"), 2)
    for role in ("prefill", "decode"):
        doc = payload.get(role)
        if isinstance(doc, dict) and doc.get("command"):
            commands.append(Block(role, role.capitalize(), doc["command"]))
            if doc.get("docker_command"):
                docker.append(Block(f"{role}-docker", f"{role.capitalize()} (docker)", doc["docker_command"]))
    if payload.get("vllm_command"):
        commands.append(Block("vllm", "vLLM (machine 1)", payload["vllm_command"]))
        commands += _numbered("vllm-worker", "vLLM worker", payload.get("vllm_worker_commands"), 2)
    for key in ("master", "store", "router", "router_config", "mooncake_config"):
        if payload.get(key):
            commands.append(Block(key.replace("_", "-"), key.replace("_", " ").capitalize(), _text(payload[key])))
    ray = bool(payload.get("ray_head_command"))
    for key, title in (("docker_command", "Docker"),
                       ("head_docker_command", "Ray's head container (machine 1)" if ray else "Head (docker)"),
                       ("ray_ready_command", "Wait until Ray's head answers (machine 1)"),
                       ("head_exec_command", "Head: the server in Ray's head container (machine 1)"),
                       ("vllm_docker_command", "vLLM (docker)")):
        if payload.get(key):
            docker.append(Block(key.replace("_", "-"), title, payload[key]))
    docker += _numbered("worker-docker", "Worker (docker)", payload.get("worker_docker_commands"), 2)
    return commands, docker


def follower_blocks(result: PlanResult, shown: list[Block]) -> list[Block]:
    """The commands of further machines the rendering object leaves out (the nodes of a
    prefill/decode pool after its first), from the plan's own processes."""
    if result.commands is not None:
        return []  # a translated plan's commands are all in its rendering object
    texts = {b.text for b in shown}
    out = []
    for proc in result.plan.processes:
        text = process_command(proc)
        if proc.rank and text not in texts:
            title = f"{proc.role.replace('_', ' ').capitalize()} (node rank {proc.rank})"
            out.append(Block(f"{proc.role.replace('_', '-')}-{proc.rank}", title, text))
    return out


def _with_checks(block: Block, checks: tuple[Check, ...]) -> Block:
    """``block`` with the checks about it, each marked on the line of its option."""
    lines, mine = attach(block.key, block.text, checks)
    return Block(block.key, block.title, block.text, tuple(Line(t, m) for t, m in lines), mine)


def reasons(extras: dict[str, Any]) -> tuple[Reason, ...]:
    out = []
    for process, doc in (extras.get("provenance") or {}).items():
        for item in doc.get("args") or []:
            out.append(Reason(process, " ".join(str(t) for t in item.get("arg") or []), str(item.get("source"))))
        for name, source in (doc.get("env") or {}).items():
            out.append(Reason(process, f"env {name}", str(source)))
    return tuple(out)


def _memory(checks_json: dict[str, Any] | None, checks: tuple[Check, ...]) -> tuple[tuple[RankMemory, ...], str]:
    if not checks_json:
        return (), "fit not checked"
    if checks_json.get("fit") is None:
        return (), str(checks_json.get("note") or "fit not checked")
    out = []
    for result in checks_json["fit"]:
        role = str(result.get("role"))
        failed = ", ".join(str(kind) for kind in result.get("failed") or ())
        verdict = ("fits" if result.get("ok") else "does not fit") + (f" ({failed})" if failed else "")
        out.append(RankMemory(role, bool(result.get("ok")), verdict, memory_chart(result.get("report")),
                              tuple(c for c in checks if c.kind == "fit" and c.role == role)))
    return tuple(out), ""


def _install(extras: dict[str, Any]) -> tuple[Form, ...]:
    """The install steps as two tabs: on the machine itself (pip and what goes with it) and in a container."""
    listed = extras.get("install") or []
    steps = [Block(f"install-{n}", str(step["kind"]).replace("_", " ") + (" (optional)" if step.get("optional") else ""),
                   str(step["command"]), note=str(step.get("note") or ""), source=str(step.get("source") or ""))
             for n, step in enumerate(listed, 1)]
    forms = [step.get("forms") or () for step in listed]
    family = next((str(s["family"]) for s in listed if s.get("family")), "")
    native = tuple(b for b, f in zip(steps, forms, strict=True) if "pip" in f)
    container = tuple(b for b, f in zip(steps, forms, strict=True) if "docker" in f)
    title = f"pip ({family.upper()})" if family else "pip"
    return tuple(form for form in (Form("install-native", title, native), Form("install-docker", "Docker", container))
                 if form.blocks)


def _forms(result: PlanResult, docker: PlanResult | str, k8s: tuple[str, str], version: str | None,
           blocks: tuple[list[Block], list[Block]], checks: tuple[Check, ...]) -> tuple[Form, ...]:
    commands, docker_blocks = blocks
    commands = commands + follower_blocks(result, commands)
    forms = [Form("command", "Command", tuple(_with_checks(b, checks) for b in commands)),
             Form("text", "Text plan", (Block("text", "servekit plan", "\n".join(plan_lines(result, version=version))),)),
             Form("sh", "Shell script", (Block("sh", "servekit plan --format sh", plan_sh(result, version=version)),))]
    if isinstance(docker, str):
        forms.append(Form("docker", "Docker", (), docker))
    else:
        dockered = tuple(_with_checks(b, checks) for b in docker_blocks)
        script = Block("docker-text", "servekit plan --docker", "\n".join(plan_lines(docker, docker=True, version=version)))
        forms.append(Form("docker", "Docker", (*dockered, script)))
    text, note = k8s
    forms.append(Form("k8s", "Kubernetes", (Block("k8s", "kubectl apply -f -", text),) if text else (), note))
    return tuple(forms)


def plan_sections(result: PlanResult, docker: PlanResult | str, k8s: tuple[str, str],
                  facts: tuple[tuple[str, str], ...], version: str | None = None) -> PlanSections:
    """The answer for ``result`` (``servekit plan``'s result for the page's request); ``docker``
    is the same request planned as it runs in its container (or why it has no docker form),
    ``k8s`` the Kubernetes documents (or why there are none); ``version``: ``--vllm-version``."""
    payload = plan_payload(result, version)
    extras = payload.get("servekit") or {}
    shown = result if not engine_errors(result) else None  # a plan that cannot run has no fit to show
    checks_json = extras.get("checks") if shown is not None else None
    docker_checks = docker.checks if isinstance(docker, PlanResult) else None
    checks = all_checks(checks_json, docker_checks, extras.get("engine_commands"))
    memory, fit_note = _memory(checks_json, checks)
    starts = not engine_errors(result) and result.can_start and result.valid
    return PlanSections(
        facts=(*facts, ("Image", str(payload.get("docker_image") or "none"))), starts=starts,
        verdict=READY if starts else CANNOT_START, checks=checks,
        forms=_forms(result, docker, k8s, version, command_blocks(payload), checks), install=_install(extras),
        memory=memory, fit_note=fit_note, reasons=reasons(extras),
        notes=tuple(str(n) for n in extras.get("notes") or []),
        env=tuple((str(k), str(v)) for k, v in (payload.get("env") or {}).items()),
    )


def k8s_text(result: PlanResult, profile: Any) -> tuple[str, str]:
    """The Kubernetes form, or why there is none; the warm step's files come from the cache only
    (a page never waits on the hub)."""
    try:
        manifests = plan_manifests(result.plan, options_from_cli(), settings=HubSettings.from_env(offline=True),
                                   profile=profile)
        return plan_k8s_text(manifests, result.plan), ""
    except ServekitError as exc:
        return "", str(exc)
