"""``up --docker``: the plan's exact ``docker run`` command through the docker CLI, on this machine.

A Docker engine must answer ``docker info`` first; when none does (the CLI without a daemon),
that is an error that names the fix. The command runs as printed by ``up --docker --dry-run``,
with three additions that let servekit find the container again: ``--detach``, ``--name
servekit-RUN-ROLE`` and ``--label servekit.run=RUN``; a ``~/`` that starts a ``-v`` source is
the home folder, as the shell expands it. The container id is recorded; the container's output
reaches the role's log through ``docker logs --follow`` (a process of the run), so readiness and
the startup phases are watched as for a local server. ``down`` runs ``docker stop``, then
``docker rm``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import replace

from servekit.engines.registry import get_engine
from servekit.errors import ServekitError
from servekit.launch import records
from servekit.launch.launch_plan import ENGINE, LaunchPlan
from servekit.launch.phases import engine_phases
from servekit.launch.readiness import PhaseCallback, Watch, wait_all
from servekit.launch.spawn import start_process
from servekit.launch.stop import stop_run

DRY_RUN_FIX = "print the commands with --docker --dry-run and run them where a Docker engine answers"
STOP_TIMEOUT_S = 30
LABEL = "servekit.run"


def docker_cli() -> str:
    found = shutil.which("docker")
    if found is None:
        raise ServekitError("the docker command is not installed here", fix=f"install Docker, or {DRY_RUN_FIX}")
    return found


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def require_engine(docker: str) -> str:
    """The server version of the Docker engine ``docker info`` reaches; an error with the fix when none answers."""
    try:
        done = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServekitError(f"docker info did not answer: {exc}",
                            fix=f"start the Docker daemon, or {DRY_RUN_FIX}") from None
    version = done.stdout.strip()
    if done.returncode != 0 or not version:
        raise ServekitError(f"no Docker engine answers here (docker info: {_last_line(done.stderr or done.stdout)})",
                            fix=f"start the Docker daemon (docker info must answer), or {DRY_RUN_FIX}")
    return version


def _home(word: str) -> str:
    return os.path.expanduser(word) if word.startswith("~/") else word


def run_words(docker: str, command: str, run: str, role: str) -> list[str]:
    """The printed ``docker run`` command as argv, detached, named and labelled for the run."""
    words = shlex.split(command)
    if words[:2] != ["docker", "run"]:
        raise ServekitError(f"not a docker run command: {command[:80]!r}")
    rest = [(_home(w) if i and words[2:][i - 1] in ("-v", "--volume") else w) for i, w in enumerate(words[2:])]
    return [docker, "run", "--detach", "--name", f"servekit-{run}-{role}", "--label", f"{LABEL}={run}", *rest]


def published_port(words: Sequence[str]) -> int:
    """The host port the container serves on: its ``-p HOST:CONTAINER``, else (host network) ``--port``."""
    for i, word in enumerate(words[:-1]):
        if word in ("-p", "--publish"):
            return int(words[i + 1].split(":")[-2])
    for i, word in enumerate(words[:-1]):
        if word == "--port":
            return int(words[i + 1])
    raise ServekitError("the docker command publishes no port", fix=DRY_RUN_FIX)


def _run(words: Sequence[str], timeout: float) -> str:
    try:
        done = subprocess.run(list(words), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServekitError(f"{shlex.join(words[:3])} failed: {exc}") from None
    if done.returncode != 0:
        raise ServekitError(f"docker run failed: {_last_line(done.stderr)}", fix="see the message above")
    return _last_line(done.stdout)


def start_docker(plan: LaunchPlan, record: records.RunRecord, timeout: float,
                 on_phase: PhaseCallback | None = None) -> records.RunRecord:
    """Run the plan's one container and wait until it serves; the record says ``ready`` or ``failed``."""
    if len(plan.processes) != 1:
        raise ServekitError(f"this plan runs {len(plan.processes)} processes; --docker starts single-server plans",
                            fix=f"run it here without --docker, or {DRY_RUN_FIX}")
    if not plan.docker_commands:
        raise ServekitError("this plan has no container form (no image for its hardware)",
                            fix="pin an image in the recipe, or run it locally without --docker")
    docker = docker_cli()
    require_engine(docker)
    process = plan.engine_server
    words = run_words(docker, plan.docker_commands[0], record.run, process.role)
    url = f"http://127.0.0.1:{published_port(words)}"
    container = _run(words, timeout)
    log = record.folder / f"{process.role}.log"
    pid = start_process([docker, "logs", "--follow", container], {}, log)
    entry = records.ProcessRecord(process.role, tuple(words), dict(process.env), str(log), pid, pid, ENGINE, url,
                                  container)
    record = replace(record, url=url, processes=(entry,)).with_times(started=time.time())
    records.save(record)
    engine = get_engine(plan.engine)
    ready = wait_all([Watch(process.role, url + engine.launch.readiness_path, (pid,), (log,), engine_phases(engine))],
                     timeout, on_phase)
    record = replace(record, phases=ready.phases, state="ready" if ready.ok else "failed", detail=ready.reason,
                     failed=ready.failed).with_times(ready_seconds=ready.seconds)
    if not ready.ok:
        problems = stop_containers([container])
        stop_run([pid], [pid])
        record = replace(record, detail="; ".join([ready.reason or "", *problems])).with_times(stopped=time.time())
    records.save(record)
    return record


def stop_containers(containers: Sequence[str]) -> list[str]:
    """``docker stop`` then ``docker rm`` each container; what failed (a container already gone is no failure)."""
    if not containers:
        return []
    docker = shutil.which("docker")
    if docker is None:
        return [f"containers {list(containers)} not stopped: the docker command is not installed"]
    problems = []
    for container in containers:
        for step in (["stop", "--time", str(STOP_TIMEOUT_S)], ["rm", "--force"]):
            try:
                done = subprocess.run([docker, *step, container], capture_output=True, text=True,
                                      timeout=STOP_TIMEOUT_S + 30, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as exc:
                problems.append(f"docker {step[0]} {container}: {exc}")
                continue
            if done.returncode != 0 and "no such container" not in done.stderr.lower():
                problems.append(f"docker {step[0]} {container}: {_last_line(done.stderr)}")
    return problems

