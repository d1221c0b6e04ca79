"""How pre-compile steps run, after the weights are in the cache.

- boot: start the engine's server once with the plan's flags and ``HF_HUB_OFFLINE=1`` so its
  compile caches fill, wait for its readiness path, stop it cleanly (SIGINT, then SIGTERM, to
  its process group);
- a command: one step of the translated launch (e.g. ``max warm-cache``, a QEfficient compile),
  run to completion in its own process group.

Each step reports its wall time; a step that cannot run here says why (``skipped``).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path

from servekit import paths
from servekit.atomic import appending
from servekit.engines.common.artifacts import MODEL, ArtifactError
from servekit.engines.common.engine import Engine
from servekit.processes import free_port, stop_group, wait_http_ok
from servekit.records import record
from servekit.warm.hub import HubSettings

DONE, SKIPPED, FAILED = "done", "skipped", "failed"


@record
class StepResult:
    name: str
    engine: str
    status: str  # done | skipped | failed
    seconds: float = 0.0
    reason: str | None = None
    command: tuple[str, ...] = ()
    log: str | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "engine": self.engine,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "reason": self.reason,
            "command": list(self.command),
            "log": self.log,
        }


@record
class BootOptions:
    health_timeout: float = 1800.0
    stop_timeout: float = 30.0
    host: str = "127.0.0.1"
    extra_env: Mapping[str, str] = field(default_factory=dict)


def engine_environment(settings: HubSettings, plan_env: Mapping[str, object]) -> dict[str, str]:
    """The process env for an engine started against the warmed cache, with no hub access."""
    env = dict(os.environ)
    env.update({k: str(v) for k, v in plan_env.items()})
    env["HF_HUB_CACHE"] = str(settings.cache_dir)
    env["HF_HUB_OFFLINE"] = "1"
    return env


def _log_file(name: str) -> Path:
    folder = paths.log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"warm-{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"


def _tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def server_args(engine: Engine, argv: Sequence[str]) -> tuple[str, list[str]]:
    """(model, options) from the engine's launch (program form or ``-m`` form), without host/port."""
    words = [str(w) for w in argv]
    try:
        model = next((a.repo_id for a in engine.artifacts(words) if a.role == MODEL), None)
    except ArtifactError:
        model = None
    if model is None:
        raise ValueError(f"no model in the {engine.id} command")
    program = list(engine.launch.program)
    if words[: len(program)] == program:
        rest = words[len(program) :]
        rest = rest[1:] if rest[:1] == [model] else rest
    else:
        rest = words[words.index("-m") + 2 :] if "-m" in words else words
    dropped = tuple(o for o in (engine.launch.model_option, "--host", "--port") if o)
    options: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word.split("=", 1)[0] in dropped:
            skip = "=" not in word
            continue
        options.append(word)
    return model, options


def boot_server(
    engine: Engine,
    python: Path,
    argv: Sequence[str],
    settings: HubSettings,
    plan_env: Mapping[str, object],
    options: BootOptions = BootOptions(),
) -> StepResult:
    """Start the engine's server once from the cache, wait until it is ready, stop it."""
    launch = engine.launch
    model, rest = server_args(engine, argv)
    port = free_port(options.host)
    command = (
        str(python),
        *launch.module_program,
        *((launch.model_option, model) if launch.model_option else (model,)),
        *rest,
        "--host",
        options.host,
        "--port",
        str(port),
    )
    env = {**engine_environment(settings, plan_env), **options.extra_env}
    log = _log_file(engine.id)
    started = time.monotonic()
    with appending(log, binary=True) as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            problem = wait_http_ok(f"http://{options.host}:{port}{launch.readiness_path}", proc.poll,
                                   options.health_timeout)
            seconds = time.monotonic() - started
        finally:
            stop_group(proc.pid, options.stop_timeout)
    if problem:
        return StepResult("boot", engine.id, FAILED, seconds, f"{problem}: {_tail(log)}", command, str(log))
    return StepResult("boot", engine.id, DONE, seconds, None, command, str(log))


def run_step(name: str, engine: str, command: Sequence[str], env: Mapping[str, str], timeout: float) -> StepResult:
    """Run one pre-compile command to completion in its own process group."""
    log = _log_file(name)
    started = time.monotonic()
    with appending(log, binary=True) as out:
        proc = subprocess.Popen(
            list(command), stdout=out, stderr=subprocess.STDOUT, env=dict(env), start_new_session=True
        )
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc.pid, 10.0)
            return StepResult(
                name,
                engine,
                FAILED,
                time.monotonic() - started,
                f"did not finish within {timeout:.0f} s",
                tuple(command),
                str(log),
            )
    seconds = time.monotonic() - started
    if code != 0:
        return StepResult(name, engine, FAILED, seconds, f"exit code {code}: {_tail(log)}", tuple(command), str(log))
    return StepResult(name, engine, DONE, seconds, None, tuple(command), str(log))
