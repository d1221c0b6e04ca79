"""The processes a run starts, as typed data: what ``up`` checks, records and spawns.

A ``LaunchPlan`` is engine-specific (its argv is the engine's own form) and keeps the native
vLLM argv it was made from, which the fit check reads. ``plan_hash`` names it in evidence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, field
from typing import Any

from servekit.engines.registry import get_engine, native_engine
from servekit.records import record

HOST_OPTIONS = ("--host", "--port")
ENGINE, ROUTER, COMPANION = "engine", "router", "companion"
"""Kinds of process: an engine server, the router in front of engine servers, a companion
service the engines use (a KV store, its master). A run starts companions, then engines, then
the router."""
START_ORDER = (COMPANION, ENGINE, ROUTER)


@record
class LaunchProcess:
    """One process: its argv (an engine's in the engine's form, without host and port; a router's
    or companion's as the catalog writes it, placeholders included) and its env."""

    role: str
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    vllm_argv: tuple[str, ...] = ()
    """The native (vLLM) form it was translated from; the fit check reads it."""
    kind: str = ENGINE
    port: int | None = None
    """The port the plan gives it (a router's backend URLs name engine servers by it)."""


@record
class LaunchPlan:
    engine: str
    model: str
    served_name: str
    processes: tuple[LaunchProcess, ...]
    hardware: str = "local"
    source: str = ""
    image: str | None = None
    features: tuple[str, ...] = ()
    docker_commands: tuple[str, ...] = ()
    """The exact ``docker run`` command of each engine process (the container form)."""
    files: tuple[tuple[str, str], ...] = ()
    """Files the processes read, as (placeholder naming the file's path, content)."""
    findings: tuple[dict[str, Any], ...] = ()
    """What translating the plan into the engine's form found."""

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["processes"] = [{**asdict(p), "env": dict(p.env)} for p in self.processes]
        return doc

    @property
    def server(self) -> LaunchProcess:
        """The process the endpoint belongs to (the router when there is one, else the first engine)."""
        return next((p for p in self.processes if p.kind == ROUTER), self.engine_server)

    @property
    def engines(self) -> tuple[LaunchProcess, ...]:
        return tuple(p for p in self.processes if p.kind == ENGINE)

    @property
    def engine_server(self) -> LaunchProcess:
        """The first engine server: the one the fit check and the startup facts are about."""
        return next((p for p in self.processes if p.kind == ENGINE), self.processes[0])


def plan_hash(plan: LaunchPlan) -> str:
    """sha256 of the plan's canonical JSON: the same plan always has the same hash."""
    raw = json.dumps(plan.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(raw.encode()).hexdigest()


def served_name_of(argv: Sequence[str], default: str) -> str:
    """The first ``--served-model-name`` value, else ``default``."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == "--served-model-name" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--served-model-name="):
            return word.split("=", 1)[1]
    return default


def without_host_port(argv: Sequence[str]) -> tuple[str, ...]:
    """The argv with ``--host`` / ``--port`` removed: the run chooses where it listens."""
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in HOST_OPTIONS:
            skip = True
            continue
        if word.split("=", 1)[0] in HOST_OPTIONS:
            continue
        out.append(word)
    return tuple(out)


def engine_process(engine: str, role: str, vllm_argv: Sequence[str], env: Mapping[str, str],
                   options: Mapping[str, Any] | None = None) -> tuple[LaunchProcess, list[dict[str, Any]]]:
    """One native launch in ``engine``'s form, with the findings of its translation."""
    from servekit.engines.common.translation import DialectContext

    chosen = get_engine(engine)
    words = without_host_port([str(w) for w in vllm_argv])
    if chosen is native_engine():
        return LaunchProcess(role, words, dict(env), words), []
    launch = chosen.translate(list(words), DialectContext(env=dict(env), options=dict(options or {})))
    findings = [{"severity": f.severity, "code": f.code, "message": f.message, "fix": f.fix}
                for f in launch.findings]
    return LaunchProcess(role, tuple(launch.argv), {**env, **launch.env}, words), findings


def plan_from_dict(doc: Mapping[str, Any]) -> LaunchPlan:
    """The plan a run record holds (``LaunchPlan.to_dict``), typed again."""
    processes = tuple(
        LaunchProcess(p["role"], tuple(p["argv"]), dict(p.get("env") or {}), tuple(p.get("vllm_argv") or ()),
                      p.get("kind") or ENGINE, p.get("port"))
        for p in doc.get("processes", [])
    )
    fields = {k: v for k, v in doc.items() if k != "processes"}
    for key in ("features", "docker_commands", "findings"):
        fields[key] = tuple(fields.get(key) or ())
    fields["files"] = tuple(tuple(f) for f in fields.get("files") or ())
    return LaunchPlan(processes=processes, **fields)
