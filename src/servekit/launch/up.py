"""From a checked plan to a serving endpoint: engine environment, cache, start, readiness.

``start_run`` binds the plan's processes to this machine (``servekit.launch.wiring``) and starts
them stage by stage, companions, then the engine servers, then the router, each process in a
process group of its own with its own log. After each stage it waits until every process of the
stage is ready while reporting the startup phases. The run is recorded as it goes; when any
process fails to become ready every process started so far is stopped and the record names the
one that failed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from servekit.atomic import write_bytes_atomic
from servekit.engines.registry import get_engine
from servekit.errors import ServekitError
from servekit.launch import records
from servekit.launch.environment import engine_version
from servekit.launch.launch_plan import COMPANION, LaunchPlan, plan_hash
from servekit.launch.programs import LocalPrograms, run_env
from servekit.launch.readiness import PhaseCallback, Watch, wait_all
from servekit.launch.spawn import start_process
from servekit.launch.wiring import Bound, Programs, Wiring, wire
from servekit.processes import StopResult, port_free, port_picker, stop_processes
from servekit.records import record

__all__ = ["UpOptions", "log_tail", "run_env", "start_run", "stop_recorded", "warm_missing"]


@record
class UpOptions:
    host: str = "127.0.0.1"
    port: int | None = None  # None: a free port
    ready_timeout: float = 1800.0
    warm: bool = True  # fetch missing files into the cache before starting


def warm_missing(plan: LaunchPlan) -> str | None:
    """Fetch what the plan loads into the cache when files are missing; None, or what is still missing."""
    if Path(plan.model).is_dir():
        return None
    from servekit.warm.engine_steps import EngineTarget, StepContext
    from servekit.warm.hub import HubSettings
    from servekit.warm.runner import WarmOptions, warm_cache

    settings = HubSettings.from_env()
    targets = [EngineTarget(plan.engine, p.argv, dict(p.env), p.role) for p in plan.engines]
    report = warm_cache(targets, settings, WarmOptions(precompile=False), StepContext(settings))
    return None if report.ok else "; ".join(report.missing[:5]) or "the cache could not be filled"


def new_record(plan: LaunchPlan, hardware: Mapping[str, Any], version: str) -> records.RunRecord:
    return records.RunRecord(
        run=records.new_run_id(), engine=plan.engine, engine_version=version, model=plan.model,
        served_name=plan.served_name, url="", plan=plan.to_dict(), plan_hash=plan_hash(plan),
        hardware=dict(hardware), processes=(), times={"created": time.time()},
    )


def _check_ports(host: str, port: int, wiring: Wiring) -> None:
    if not port_free(host, port):
        raise ServekitError(f"port {port} on {host} is in use", fix="pick another --port")
    for bound in (b for stage in wiring.stages for b in stage if b.kind == COMPANION):
        taken = bound.check.rsplit(":", 1)[-1].split("/", 1)[0]
        if taken.isdigit() and not port_free(host, int(taken)):
            raise ServekitError(f"port {taken} that {bound.role} listens on is in use on {host}",
                                fix="stop what holds it (servekit ps lists runs)")


def start_run(plan: LaunchPlan, hardware: Mapping[str, Any], options: UpOptions = UpOptions(),
              on_phase: PhaseCallback | None = None, programs: Programs | None = None) -> records.RunRecord:
    """Start the plan here and wait until it serves; the record says ``ready`` or ``failed``.

    ``programs`` says where the commands come from (default: the installed engine environment
    and the companions' pinned environments)."""
    engine = get_engine(plan.engine)
    programs = programs or LocalPrograms(engine)
    pick_port = port_picker(options.host, given=[options.port] if options.port else [])
    port = options.port or pick_port()
    if options.warm and (missing := warm_missing(plan)):
        raise ServekitError(f"the model's files are not in the cache: {missing}", fix="servekit warm-cache")
    run_record = new_record(plan, hardware, engine_version(engine, getattr(programs, "env", None)))
    wiring = wire(plan, options.host, port, run_record.folder, programs, pick_port)
    _check_ports(options.host, port, wiring)
    for path, content in wiring.files:
        write_bytes_atomic(path, content.encode("utf-8"))
    run_record = replace(run_record, url=wiring.url)
    try:
        return _run_stages(run_record, wiring, options, on_phase)
    except BaseException as exc:  # Ctrl-C while starting, or a program that cannot be spawned
        _abandon(run_record, exc)
        raise


def _abandon(run_record: records.RunRecord, exc: BaseException) -> None:
    """Stop what a start cut short had started; its record says why."""
    if not (run_record.folder / records.RECORD_FILE).is_file():
        return
    saved = records.load(run_record.run)
    stop_processes(saved.pids, saved.groups)
    why = str(exc) or type(exc).__name__
    records.save(replace(saved, state="failed", detail=f"start interrupted: {why}").with_times(stopped=time.time()))


def _start_stage(run_record: records.RunRecord, stage: tuple[Bound, ...]) -> tuple[records.RunRecord, list[Watch]]:
    entries, watches = [], []
    for bound in stage:
        log = run_record.folder / f"{bound.role}.log"
        pid = start_process(bound.command, bound.env, log)
        entries.append(records.ProcessRecord(bound.role, bound.command, bound.env, str(log), pid, pid,
                                             bound.kind, bound.url))
        watches.append(Watch(bound.role, bound.check, (pid,), (log,), bound.phases))
    run_record = replace(run_record, processes=(*run_record.processes, *entries))
    records.save(run_record)
    return run_record, watches


def _run_stages(run_record: records.RunRecord, wiring: Wiring, options: UpOptions,
                on_phase: PhaseCallback | None) -> records.RunRecord:
    origin = time.monotonic()
    run_record = run_record.with_times(started=time.time())
    named = sum(len(stage) for stage in wiring.stages) > 1
    running: list[Watch] = []
    phases: dict[str, float] = {}
    for stage in wiring.stages:
        run_record, watches = _start_stage(run_record, stage)
        left = max(1.0, options.ready_timeout - (time.monotonic() - origin))
        ready = wait_all(watches, left, on_phase, running=running, named=named, since=origin)
        phases.update(ready.phases)
        if not ready.ok:
            return _failed(replace(run_record, phases=phases), ready.reason, ready.failed, ready.seconds)
        running += watches
    run_record = replace(run_record, phases=phases, state="ready", detail=None)
    run_record = run_record.with_times(ready_seconds=round(time.monotonic() - origin, 2), checked=time.time())
    records.save(run_record)
    return run_record


def _failed(run_record: records.RunRecord, reason: str | None, failed: str | None, seconds: float) -> records.RunRecord:
    """Stop every process started so far; the record says which one failed and why."""
    stopped = stop_processes(run_record.pids, run_record.groups)
    detail = reason if not stopped.left else f"{reason}; still alive: {list(stopped.left)}"
    run_record = replace(run_record, state="failed", detail=detail, failed=failed)
    run_record = run_record.with_times(ready_seconds=seconds, checked=time.time(), stopped=time.time())
    records.save(run_record)
    return run_record


def stop_recorded(run_record: records.RunRecord) -> tuple[records.RunRecord, StopResult]:
    """Stop every process of a recorded run (its containers first); the updated record and the ``StopResult``."""
    problems: list[str] = []
    if run_record.containers:
        from servekit.launch.docker_run import stop_containers

        problems = stop_containers(run_record.containers)
    result = stop_processes(run_record.pids, run_record.groups)
    clean = result.clean and not problems
    detail = None if clean else "; ".join([*problems, *([f"still alive after SIGKILL: {list(result.left)}"]
                                                         if result.left else [])])
    updated = replace(run_record, state="stopped" if clean else run_record.state, detail=detail)
    updated = updated.with_times(stopped=time.time())
    records.save(updated)
    return updated, StopResult(result.signals, result.left, tuple(problems))


def log_tail(run_record: records.RunRecord, lines: int = 30, role: str | None = None) -> str:
    """The last ``lines`` of each process's log (only ``role``'s when given), each under a
    ``==> ROLE <==`` header when the run has several processes."""
    out = []
    chosen = [p for p in run_record.processes if role is None or p.role == role]
    for process in chosen:
        try:
            text = Path(process.log).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        if len(run_record.processes) > 1:
            out.append(f"==> {process.role} ({process.log}) <==")
        out += text[-lines:]
    return "\n".join(out)
