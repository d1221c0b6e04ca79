"""Where a run's engine comes from on this machine: the engine environment servekit manages
(``servekit engine install``), and the command line that starts its server there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from servekit.engines.common.engine import Engine
from servekit.engines.environments import EngineEnv, find_env
from servekit.engines.metadata_alias import missing_aliases
from servekit.errors import ServekitError
from servekit.warm.precompile import server_args


def engine_env(engine: Engine) -> EngineEnv:
    """The installed environment of ``engine`` at its pinned version; a missing one is an error with the fix."""
    if engine.install is None:
        raise ServekitError(f"{engine.id} cannot run on this machine (it has no local environment)",
                            fix="use --docker --dry-run for the container commands")
    env = find_env(engine.install.requirement)
    if env is None:
        raise ServekitError(f"the {engine.id} environment {engine.install.requirement} is not installed",
                            fix=f"servekit engine install {engine.install.requirement}")
    return env


def engine_version(engine: Engine, env: EngineEnv | None) -> str:
    record = env.record() if env is not None else None
    return str((record or {}).get("version") or engine.default_version)


def program_works(engine: Engine, env: EngineEnv) -> bool:
    """The engine's own command (``vllm serve``) is in the environment's ``bin`` folder and finds
    its distribution under the name it looks itself up by (``servekit engine install`` writes it)."""
    program = env.python.parent / engine.launch.program[0]
    return program.exists() and not missing_aliases(env.venv, env.spec.aliases)


def server_command(engine: Engine, python: Path, argv: Sequence[str], host: str, port: int,
                   module_form: bool | None = None) -> tuple[str, ...]:
    """The command that starts ``argv`` (the engine's own form) from the environment of ``python``.

    The program words resolve in the environment's ``bin`` folder; ``module_form`` (default: when
    the engine declares one) starts the same server as ``python -m ...`` instead.
    """
    launch = engine.launch
    listen = ("--host", host, "--port", str(port))
    if launch.module_program and (module_form if module_form is not None else True):
        model, rest = server_args(engine, [str(w) for w in argv])
        named = (launch.model_option, model) if launch.model_option else (model,)
        return (str(python), *launch.module_program, *named, *rest, *listen)
    program = list(launch.program)
    program[0] = str(python.parent / program[0])
    given = [str(w) for w in argv][len(launch.program):]
    return (*program, *without_listen(given), *listen)


def without_listen(words: Sequence[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--host", "--port"):
            skip = True
        elif word.split("=", 1)[0] not in ("--host", "--port"):
            out.append(word)
    return out
