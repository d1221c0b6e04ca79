"""Runs recorded under servekit's home: ``home()/runs/<ID>/run.json`` plus one log per process.

A record holds the plan, every process (argv, env, pid, log), the URL and the times. It is
written atomically (temp file, then rename), so a reader never sees half a record.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import asdict, field, replace
from pathlib import Path
from typing import Any

from servekit import paths
from servekit.atomic import write_json_atomic
from servekit.errors import ServekitError
from servekit.records import record

RECORD_FILE = "run.json"
RECORD_VERSION = 1


def runs_dir() -> Path:
    return paths.home() / "runs"


def new_run_id() -> str:
    """Sortable by start time, unique across concurrent starts."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@record
class ProcessRecord:
    """One process of a run: its role and kind (engine, router, companion), the command it runs,
    its log, its pid and process group, the URL it serves (when it serves HTTP), and the container
    id when it runs in a container (the pid is then that of ``docker logs --follow``)."""

    role: str
    argv: tuple[str, ...]
    env: dict[str, str]
    log: str
    pid: int | None = None
    pgid: int | None = None
    kind: str = "engine"
    url: str | None = None
    container: str | None = None


@record
class RunRecord:
    run: str
    engine: str
    engine_version: str
    model: str
    served_name: str
    url: str
    plan: dict[str, Any]
    plan_hash: str
    hardware: dict[str, Any]
    processes: tuple[ProcessRecord, ...]
    state: str = "starting"  # starting | ready | failed | stopped
    times: dict[str, float] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)
    detail: str | None = None
    failed: str | None = None
    """The role of the process that kept the run from becoming ready."""

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.pid is not None]

    @property
    def groups(self) -> list[int]:
        return [p.pgid for p in self.processes if p.pgid]

    @property
    def containers(self) -> list[str]:
        return [p.container for p in self.processes if p.container]

    def process(self, role: str) -> ProcessRecord | None:
        return next((p for p in self.processes if p.role == role), None)

    @property
    def folder(self) -> Path:
        return runs_dir() / self.run

    def with_times(self, **stamps: float) -> RunRecord:
        return replace(self, times={**self.times, **stamps})

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["processes"] = [asdict(p) for p in self.processes]
        doc["record_version"] = RECORD_VERSION
        return doc



def save(run_record: RunRecord) -> Path:
    path = run_record.folder / RECORD_FILE
    write_json_atomic(path, run_record.to_dict())
    return path


def from_dict(doc: dict[str, Any]) -> RunRecord:
    fields = {k: v for k, v in doc.items() if k != "record_version"}
    fields["processes"] = tuple(
        ProcessRecord(**{**p, "argv": tuple(p["argv"])}) for p in doc.get("processes", [])
    )
    return RunRecord(**fields)


def load(run: str) -> RunRecord:
    """The record of ``run`` (an id, or a unique prefix of one)."""
    path = runs_dir() / run / RECORD_FILE
    if not path.is_file():
        matches = [p for p in list_ids() if p.startswith(run)] if run else []
        if len(matches) != 1:
            known = ", ".join(list_ids()[-5:]) or "none"
            raise ServekitError(f"no run {run!r} under {runs_dir()}",
                                fix=f"see `servekit ps` (recent runs: {known})")
        path = runs_dir() / matches[0] / RECORD_FILE
    try:
        return from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ServekitError(f"run record {path} cannot be read: {exc}", fix="remove the run folder") from None


def list_ids() -> list[str]:
    base = runs_dir()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / RECORD_FILE).is_file())


def all_records() -> list[RunRecord]:
    out = []
    for run in list_ids():
        try:
            out.append(load(run))
        except ServekitError:
            continue
    return out
