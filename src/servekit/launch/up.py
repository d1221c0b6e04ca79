"""From a checked plan to a serving endpoint: engine environment, cache, start, readiness.

``start_run`` spawns the plan's server process in its own process group (logs under the run's
folder), records the run, waits for readiness while reporting the startup phases, and leaves it
running (``up --detach``) or stops it when it fails to become ready.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from servekit.engines.common.engine import Engine
from servekit.engines.registry import get_engine
from servekit.errors import ServekitError
from servekit.launch import records
from servekit.launch.environment import engine_env, engine_version, program_works, server_command
from servekit.launch.launch_plan import LaunchPlan, plan_hash
from servekit.launch.phases import engine_phases
from servekit.launch.readiness import PhaseCallback, wait_ready
from servekit.launch.spawn import start_process
from servekit.launch.stop import stop_run


@dataclass(frozen=True)
class UpOptions:
    host: str = "127.0.0.1"
    port: int | None = None  # None: a free port
    ready_timeout: float = 1800.0
    warm: bool = True  # fetch missing files into the cache before starting


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_free(host: str, port: int) -> bool:
    """No socket is bound to the port (connections left in TIME_WAIT do not count, as for servers)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def warm_missing(plan: LaunchPlan) -> str | None:
    """Fetch what the plan loads into the cache when files are missing; None, or what is still missing."""
    if Path(plan.model).is_dir():
        return None
    from servekit.warm.engine_steps import EngineTarget, StepContext
    from servekit.warm.hub import HubSettings
    from servekit.warm.runner import WarmOptions, warm_cache

    settings = HubSettings.from_env()
    targets = [EngineTarget(plan.engine, p.argv, dict(p.env), p.role) for p in plan.processes]
    report = warm_cache(targets, settings, WarmOptions(precompile=False), StepContext(settings))
    return None if report.ok else "; ".join(report.missing[:5]) or "the cache could not be filled"


def run_env(engine: Engine, env: Mapping[str, str], host: str) -> dict[str, str]:
    """The process's env, with a free port for ``/metrics`` where the engine serves them on a port
    of their own (two runs would both take the engine's fixed default)."""
    out = dict(env)
    name = engine.launch.metrics_port_env
    if name and name not in out:
        out[name] = str(free_port(host))
    return out


def _new_record(plan: LaunchPlan, hardware: Mapping[str, Any], url: str, version: str) -> records.RunRecord:
    return records.RunRecord(
        run=records.new_run_id(), engine=plan.engine, engine_version=version, model=plan.model,
        served_name=plan.served_name, url=url, plan=plan.to_dict(), plan_hash=plan_hash(plan),
        hardware=dict(hardware), processes=(), times={"created": time.time()},
    )


def start_run(plan: LaunchPlan, hardware: Mapping[str, Any], options: UpOptions = UpOptions(),
              on_phase: PhaseCallback | None = None) -> records.RunRecord:
    """Start the plan here and wait until it serves; the record says ``ready`` or ``failed``."""
    if len(plan.processes) != 1:
        raise ServekitError(f"this plan has {len(plan.processes)} processes; `up` starts single-server plans "
                            "on this machine", fix="use --docker --dry-run for the container commands")
    engine = get_engine(plan.engine)
    env = engine_env(engine)
    port = options.port or free_port(options.host)
    if not port_free(options.host, port):
        raise ServekitError(f"port {port} on {options.host} is in use", fix="pick another --port")
    if options.warm and (missing := warm_missing(plan)):
        raise ServekitError(f"the model's files are not in the cache: {missing}", fix="servekit warm-cache")
    url = f"http://{options.host}:{port}"
    record = _new_record(plan, hardware, url, engine_version(engine, env))
    process = plan.server
    command = server_command(engine, env.python, process.argv, options.host, port,
                             module_form=not program_works(engine, env))
    log = record.folder / f"{process.role}.log"
    started = time.time()
    process_env = run_env(engine, process.env, options.host)
    pid = start_process(command, process_env, log)
    entry = records.ProcessRecord(process.role, command, process_env, str(log), pid, pid)
    record = replace(record, processes=(entry,)).with_times(started=started)
    records.save(record)
    ready = wait_ready(url + engine.launch.readiness_path, [pid], [log], engine_phases(engine),
                       options.ready_timeout, on_phase)
    record = replace(record, phases=ready.phases, state="ready" if ready.ok else "failed",
                     detail=ready.reason).with_times(ready_seconds=ready.seconds, checked=time.time())
    if not ready.ok:
        stopped = stop_run([pid], [pid])
        record = replace(record, state="failed").with_times(stopped=time.time())
        if stopped.left:
            record = replace(record, detail=f"{ready.reason}; still alive: {list(stopped.left)}")
    records.save(record)
    return record


def stop_recorded(record: records.RunRecord) -> tuple[records.RunRecord, Any]:
    """Stop every process of a recorded run; the updated record and the ``StopResult``."""
    groups = [p.pgid for p in record.processes if p.pgid]
    result = stop_run(record.pids, groups)
    updated = replace(record, state="stopped" if result.clean else record.state,
                      detail=None if result.clean else f"still alive after SIGKILL: {list(result.left)}")
    updated = updated.with_times(stopped=time.time())
    records.save(updated)
    return updated, result


def log_tail(record: records.RunRecord, lines: int = 30) -> str:
    out = []
    for process in record.processes:
        try:
            text = Path(process.log).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        out += text[-lines:]
    return "\n".join(out)
