"""A planned result as the builder page's sections: commands per machine, docker, env, install,
the reason for each argument, the fit verdict, other engines' forms and the Kubernetes form.

Every text shown comes from the JSON document ``servekit plan --format json`` prints
(``servekit.app.plan_view.plan_payload``), so the page shows what the CLI prints.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from servekit.app.plan import PlanResult, plan_from_selection
from servekit.app.plan_view import plan_payload
from servekit.catalog.documents import CatalogDocuments
from servekit.engines.plan_translate import dialect_names
from servekit.errors import ServekitError
from servekit.findings import Finding

FIGURES = (("budget_gib", "memory budget per device (GiB)"), ("weights_gib_per_rank", "weights per rank (GiB)"),
           ("activation_gib", "activations (GiB)"), ("available_kv_gib", "left for the KV cache (GiB)"),
           ("kv_tokens", "KV cache tokens"), ("max_concurrency", "sequences at full context"),
           ("max_model_len", "context length"), ("kv_cache_dtype", "KV cache dtype"), ("tp", "tensor parallel"),
           ("pp", "pipeline parallel"))


@dataclass(frozen=True)
class Block:
    """One copyable text: a command, a docker form, a config."""

    key: str
    title: str
    text: str


@dataclass(frozen=True)
class Reason:
    process: str
    arg: str
    source: str


@dataclass(frozen=True)
class FitRow:
    role: str
    ok: bool
    figures: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class EngineForm:
    engine: str
    applies: bool
    blocks: tuple[Block, ...]
    findings: tuple[Finding, ...]
    untranslated: tuple[str, ...]


@dataclass(frozen=True)
class PlanSections:
    heading: str
    commands: tuple[Block, ...]
    docker: tuple[Block, ...]
    env: tuple[tuple[str, str], ...]
    image: str
    install: tuple[Block, ...]
    reasons: tuple[Reason, ...]
    fit: tuple[FitRow, ...]
    fit_note: str
    notes: tuple[str, ...]
    engines: tuple[EngineForm, ...]
    k8s: Block | None
    k8s_note: str


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
    for key, title in (("docker_command", "Docker"), ("head_docker_command", "Head (docker)"),
                       ("vllm_docker_command", "vLLM (docker)")):
        if payload.get(key):
            docker.append(Block(key.replace("_", "-"), title, payload[key]))
    docker += _numbered("worker-docker", "Worker (docker)", payload.get("worker_docker_commands"), 2)
    return commands, docker


def _finding(f: dict[str, Any]) -> Finding:
    return Finding(str(f.get("severity") or "note"), str(f.get("code") or ""), str(f.get("message") or ""),
                   f.get("fix") or None)


def fit_rows(checks: dict[str, Any] | None) -> tuple[tuple[FitRow, ...], str]:
    if not checks:
        return (), "fit not checked"
    if checks.get("fit") is None:
        return (), str(checks.get("note") or "fit not checked")
    rows = []
    for result in checks["fit"]:
        report = result.get("report") or {}
        figures = tuple((label, str(report[key])) for key, label in FIGURES if report.get(key) is not None)
        rows.append(FitRow(str(result.get("role")), bool(result.get("ok")), figures,
                           tuple(_finding(f) for f in result.get("findings") or [])))
    return tuple(rows), ""


def reasons(extras: dict[str, Any]) -> tuple[Reason, ...]:
    out = []
    for process, doc in (extras.get("provenance") or {}).items():
        for item in doc.get("args") or []:
            out.append(Reason(process, " ".join(str(t) for t in item.get("arg") or []), str(item.get("source"))))
        for name, source in (doc.get("env") or {}).items():
            out.append(Reason(process, f"env {name}", str(source)))
    return tuple(out)


def engine_form(docs: CatalogDocuments, result: PlanResult, engine: str) -> EngineForm:
    """The plan in another engine's form; ``applies`` when it translated without an error."""
    selection = dataclasses.replace(result.selection, engine=engine)
    try:
        translated = plan_from_selection(docs, selection, checks=False)
    except ServekitError as exc:
        return EngineForm(engine, False, (), (Finding("error", "engine", str(exc)),), ())
    blocks: list[Block] = []
    findings: list[Finding] = []
    untranslated: list[str] = []
    for pc in translated.commands or ():
        data = pc.to_dict()
        name = f"{pc.role}{f' rank {pc.rank}' if pc.rank else ''}"
        for step in data.get("precompile") or []:
            blocks.append(Block(f"{engine}-{pc.role}-{pc.rank}-{step.get('name')}", f"{name}: before start",
                                str(step.get("command") or "")))
        blocks.append(Block(f"{engine}-{pc.role}-{pc.rank}", name, str(data.get("command") or "")))
        findings += [_finding(f) for f in data.get("findings") or []]
        untranslated += [f"{u.get('flag')}: {u.get('reason')}" for u in data.get("untranslated") or []]
    return EngineForm(engine, translated.valid, tuple(blocks), tuple(findings), tuple(untranslated))


def k8s_block(result: PlanResult, profile: Any) -> tuple[Block | None, str]:
    """The Kubernetes form; the warm step's files come from the cache only (a page never waits on the hub)."""
    from servekit.app.k8s_plan import plan_k8s_text, plan_manifests
    from servekit.k8s.cli_glue import options_from_cli
    from servekit.warm.hub import HubSettings

    try:
        manifests = plan_manifests(result.plan, options_from_cli(), settings=HubSettings.from_env(offline=True),
                                   profile=profile)
        return Block("k8s", "Kubernetes (kubectl apply -f -)", plan_k8s_text(manifests, result.plan)), ""
    except ServekitError as exc:
        return None, str(exc)


def plan_sections(docs: CatalogDocuments, result: PlanResult) -> PlanSections:
    payload = plan_payload(result)
    extras = payload.get("servekit") or {}
    commands, docker = command_blocks(payload)
    fit, fit_note = fit_rows(result.checks)
    sel = result.selection
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(sel.hardware)
    k8s, k8s_note = k8s_block(result, profile)
    install = tuple(Block(f"install-{n}", f"{step['kind']}" + (f" ({step['note']})" if step.get("note") else ""),
                          str(step["command"])) for n, step in enumerate(extras.get("install") or [], 1))
    return PlanSections(
        heading=f"{sel.recipe_id} on {sel.hardware}: variant {sel.variant}, strategy {sel.strategy}, "
                f"{sel.node_count} node(s), {payload.get('deploy_type', '')}",
        commands=tuple(commands), docker=tuple(docker),
        env=tuple((str(k), str(v)) for k, v in (payload.get("env") or {}).items()),
        image=str(payload.get("docker_image") or ""), install=install, reasons=reasons(extras),
        fit=fit, fit_note=fit_note, notes=tuple(str(n) for n in extras.get("notes") or []),
        engines=tuple(engine_form(docs, result, name) for name in dialect_names()),
        k8s=k8s, k8s_note=k8s_note,
    )
