"""``up --docker``: the plan's exact ``docker run`` command through the docker CLI, on this machine.

A Docker engine must answer ``docker info`` first; when none does (the CLI without a daemon),
that is an error that names the fix. The command runs as printed by ``up --docker --dry-run``,
with the additions that let servekit find and stop the container again: ``--detach``,
``--init`` (below), ``--name servekit-RUN-ROLE`` and ``--label servekit.run=RUN``; a ``~/``
that starts a ``-v`` source is the home folder, as the shell expands it. The container id is
recorded; the container's output reaches the role's log through ``docker logs --follow`` (a
process of the run), so readiness and the startup phases are watched as for a local server.
``down`` runs ``docker stop``, then ``docker rm``.

``--init`` makes Docker's init the container's first process: it forwards ``docker stop``'s
SIGTERM to the server and reaps the processes it leaves, so ``down`` takes a fraction of a
second rather than the stop timeout (measured with Debian's docker.io 20.10: 0.2 s against 10 s).

``up``'s container options change the form itself, so ``--dry-run`` prints them
(``ContainerOptions``): more bind mounts (``--volume``), Docker's pull policy (``--pull``) and
the host address the published port binds (``--host``; ``up`` serves on 127.0.0.1 unless told).

When ``docker run`` fails, the container it may have created is removed and the error names the
cause the daemon gave, with the fix for the causes a host commonly lacks (``FAILURES``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from servekit.engines.registry import get_engine
from servekit.errors import ServekitError
from servekit.launch import records
from servekit.launch.launch_plan import ENGINE, LaunchPlan
from servekit.launch.phases import engine_phases
from servekit.launch.readiness import PhaseCallback, Watch, wait_all
from servekit.launch.spawn import start_process
from servekit.processes import stop_processes
from servekit.records import record
from servekit.synthesis.shell import quote_word

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


def _docker_run_words(command: str) -> list[str]:
    words = shlex.split(command)
    if words[:2] != ["docker", "run"]:
        raise ServekitError(f"not a docker run command: {command[:80]!r}")
    return words


def run_words(docker: str, command: str, run: str, role: str) -> list[str]:
    """The printed ``docker run`` command as argv, detached, named and labelled for the run, under Docker's init."""
    words = _docker_run_words(command)
    rest = [(_home(w) if i and words[2:][i - 1] in ("-v", "--volume") else w) for i, w in enumerate(words[2:])]
    return [docker, "run", "--detach", "--init", "--name", f"servekit-{run}-{role}", "--label", f"{LABEL}={run}",
            *rest]


PULL_POLICIES = ("missing", "always", "never")
"""``docker run --pull`` values (docs.docker.com/reference/cli/docker/container/run/#pull)."""
VOLUME_MODES = ("ro", "rw")


@record
class ContainerOptions:
    """What ``up --docker`` sets on the plan's container form (``--dry-run`` prints the command with it)."""

    volumes: tuple[str, ...] = ()
    """More bind mounts, each ``SRC:DST[:ro|rw]`` with both paths absolute (SRC may start with ``~/``)."""
    pull: str | None = None
    """Docker's pull policy for the image (``PULL_POLICIES``); None leaves Docker's default (missing)."""
    host: str | None = None
    """The host address the published port binds (``-p HOST:PORT:PORT``); None: every address."""


def checked_volume(value: str) -> str:
    """``value`` when it is ``SRC:DST[:ro|rw]`` with absolute paths; a clear error otherwise."""
    parts = value.split(":")
    fix = "--volume SRC:DST[:ro], both paths absolute, e.g. --volume /data/models:/models:ro"
    if len(parts) not in (2, 3) or not all(parts[:2]):
        raise ServekitError(f"--volume {value!r} is not SRC:DST[:ro|rw]", fix=fix)
    if not (parts[0].startswith("/") or parts[0].startswith("~/")) or not parts[1].startswith("/"):
        raise ServekitError(f"--volume {value!r}: both paths must be absolute", fix=fix)
    if len(parts) == 3 and parts[2] not in VOLUME_MODES:
        raise ServekitError(f"--volume {value!r}: the mode must be one of {', '.join(VOLUME_MODES)}", fix=fix)
    return value


def missing_volume_sources(options: ContainerOptions) -> list[str]:
    """The ``--volume`` sources that do not exist on this machine (Docker would create them empty)."""
    return [v.split(":")[0] for v in options.volumes if not Path(_home(v.split(":")[0])).exists()]


def _publish_on(value: str, host: str) -> str:
    """``PORT:CONTAINER_PORT`` bound to ``host``; a value that names its own address stays as it is."""
    if value.count(":") != 1:
        return value
    return f"{f'[{host}]' if ':' in host else host}:{value}"


def container_command(command: str, options: ContainerOptions) -> str:
    """The plan's ``docker run`` command with ``options`` set, in the same one-line shell form."""
    words = _docker_run_words(command)
    if options.pull is not None and options.pull not in PULL_POLICIES:
        raise ServekitError(f"--pull {options.pull!r} is not one of {', '.join(PULL_POLICIES)}",
                            fix="--pull never runs only an image already on this machine")
    rest = words[2:]
    if options.host:
        rest = [_publish_on(w, options.host) if i and rest[i - 1] in ("-p", "--publish") else w
                for i, w in enumerate(rest)]
    added = [*(["--pull", options.pull] if options.pull else []),
             *(t for v in options.volumes for t in ("-v", checked_volume(v)))]
    return " ".join(quote_word(w) for w in ["docker", "run", *added, *rest])


def published_port(words: Sequence[str]) -> int:
    """The host port the container serves on: its ``-p [HOST:]PORT:CONTAINER``, else (host network) ``--port``."""
    for i, word in enumerate(words[:-1]):
        if word in ("-p", "--publish"):
            return int(words[i + 1].rsplit(":", 2)[-2])
    for i, word in enumerate(words[:-1]):
        if word == "--port":
            return int(words[i + 1])
    raise ServekitError("the docker command publishes no port", fix=DRY_RUN_FIX)


def endpoint(words: Sequence[str]) -> str:
    """The URL this machine reaches the container at: the address its port is published on, else 127.0.0.1."""
    host = "127.0.0.1"
    for i, word in enumerate(words[:-1]):
        if word in ("-p", "--publish") and words[i + 1].count(":") >= 2:
            named = words[i + 1].rsplit(":", 2)[0]
            host = named if named not in ("0.0.0.0", "[::]", "") else host
    return f"http://{host}:{published_port(words)}"


FAILURES = (
    ("could not select device driver", "no GPU container runtime answers here, so the plan's --gpus cannot be granted",
     "run it on a host with the NVIDIA Container Toolkit, or"),
    ("unable to apply caps", "this host does not let a container hold every capability --privileged asks for",
     "run it where containers may be privileged, or"),
    ("error setting rlimit", "this host does not let a container raise a limit its --ulimit asks for",
     "run it where the daemon may raise that limit (memlock=-1 needs CAP_SYS_RESOURCE), or"),
    ("error gathering device information", "a device the command passes (--device) does not exist on this host",
     "run it on the hardware the plan is for, or"),
    ("no such image", "the image is not on this machine and --pull never forbids fetching it",
     "load or pull the image first, or"),
    ("dial tcp", "the image is not on this machine and its registry cannot be reached",
     "pull or load the image where a registry answers, or"),
)
"""(text of the daemon's error, cause, fix) for what a host commonly lacks; the texts are those
Debian's docker.io 20.10 gives on a machine without GPUs or CAP_SYS_RESOURCE (docs/DESIGN.md,
"What else runs on these machines")."""


def _daemon_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("Run 'docker")] or ["no output"]
    chosen = next((line for line in lines if "Error response from daemon" in line), lines[-1])
    return chosen.removeprefix("docker: ")


def run_failure(stderr: str) -> ServekitError:
    """The error for a failed ``docker run``: the daemon's words, and the cause and fix where known."""
    said = _daemon_error(stderr)
    for text, cause, fix in FAILURES:
        if text in said.lower():
            return ServekitError(f"docker run failed: {cause} ({said})", fix=f"{fix} {DRY_RUN_FIX}")
    return ServekitError(f"docker run failed: {said}", fix=f"see Docker's message; or {DRY_RUN_FIX}")


def _run(words: Sequence[str], name: str, timeout: float) -> str:
    """Run the container; when that fails, remove what ``docker run`` created and raise the cause."""
    try:
        done = subprocess.run(list(words), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        stop_containers([name])
        raise ServekitError(f"{shlex.join(words[:3])} failed: {exc}") from None
    if done.returncode != 0:
        stop_containers([name])
        raise run_failure(done.stderr)
    return _last_line(done.stdout)


def start_docker(plan: LaunchPlan, run_record: records.RunRecord, timeout: float,
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
    words = run_words(docker, plan.docker_commands[0], run_record.run, process.role)
    url = endpoint(words)
    container = _run(words, words[words.index("--name") + 1], timeout)
    log = run_record.folder / f"{process.role}.log"
    pid = start_process([docker, "logs", "--follow", container], {}, log)
    entry = records.ProcessRecord(process.role, tuple(words), dict(process.env), str(log), pid, pid, ENGINE, url,
                                  container)
    run_record = replace(run_record, url=url, processes=(entry,)).with_times(started=time.time())
    records.save(run_record)
    engine = get_engine(plan.engine)
    ready = wait_all([Watch(process.role, url + engine.launch.readiness_path, (pid,), (log,), engine_phases(engine))],
                     timeout, on_phase)
    run_record = replace(run_record, phases=ready.phases, state="ready" if ready.ok else "failed", detail=ready.reason,
                     failed=ready.failed).with_times(ready_seconds=ready.seconds)
    if not ready.ok:
        exited = _container_exit(docker, container)
        problems = stop_containers([container])
        stop_processes([pid], [pid])
        detail = "; ".join(part for part in (ready.reason, exited, *problems) if part)
        run_record = replace(run_record, detail=detail).with_times(stopped=time.time())
    records.save(run_record)
    return run_record


def _container_exit(docker: str, container: str) -> str:
    """``the container exited with code N`` once it has stopped; empty while it runs or when Docker cannot say."""
    try:
        done = subprocess.run([docker, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", container],
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    status, _, code = done.stdout.strip().partition(" ")
    return f"the container exited with code {code}" if done.returncode == 0 and status == "exited" else ""


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

