"""The programs a run starts on this machine: the engine's server from its environment
(``servekit engine install``), a router or companion from its own pinned environment, installed
on first use (``servekit.engines.companions``; ``servekit engine install`` ahead of time)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from servekit.engines.common.engine import Engine
from servekit.engines.companions import program_of
from servekit.engines.environments import EngineEnv, find_env, install
from servekit.errors import ServekitError
from servekit.launch.environment import engine_env, program_works, server_command
from servekit.launch.launch_plan import LaunchProcess
from servekit.launch.phases import PhaseMatcher, engine_phases
from servekit.processes import free_port


def run_env(engine: Engine, env: Mapping[str, str], host: str) -> dict[str, str]:
    """The process's env, with a free port for ``/metrics`` where the engine serves them on a port
    of their own (two servers would both take the engine's fixed default)."""
    out = dict(env)
    name = engine.launch.metrics_port_env
    if name and name not in out:
        out[name] = str(free_port(host))
    return out


def companion_env(word: str) -> EngineEnv:
    """The pinned environment of the program ``word`` names, installed when missing."""
    program = program_of(word)
    if program is None:
        raise ServekitError(f"servekit has no pinned program {word!r}", fix="start it yourself")
    spec = program.spec()
    env = find_env(spec)
    if env is None:
        print(f"installing {spec.requirement} (first use; a pinned environment of its own)", file=sys.stderr)
        env = install(spec).env
    return env


class LocalPrograms:
    """``wiring.Programs`` for this machine: ``engine`` from its installed environment."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.env = engine_env(engine)
        self.module_form = not program_works(engine, self.env)

    def engine_command(self, process: LaunchProcess, host: str, port: int) -> tuple[str, ...]:
        return server_command(self.engine, self.env.python, process.argv, host, port, module_form=self.module_form)

    def engine_env(self, env: Mapping[str, str], host: str) -> dict[str, str]:
        return run_env(self.engine, env, host)

    def program(self, word: str) -> str:
        env = companion_env(word)
        path = env.python.parent / Path(word).name
        if not path.exists():
            raise ServekitError(f"{path} is missing from the {env.spec.requirement} environment",
                                fix=f"servekit engine install {env.spec.requirement} (after removing {env.root})")
        return str(path)

    def engine_check(self, url: str) -> str:
        return url + self.engine.launch.readiness_path

    def engine_phases(self) -> PhaseMatcher:
        return engine_phases(self.engine)
