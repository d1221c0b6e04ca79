"""The lifecycle of local engine environments: one pinned venv per engine and version.

Layout under :func:`servekit.paths.engines_dir`::

    <dist>-<version>/venv/          the virtual environment
    <dist>-<version>/record.json    what it holds (interpreter, packages, versions), versioned
    <dist>-<version>/complete       written last: the environment finished installing
    <dist>-<version>.lock           one lock per environment (kept outside so the dir can go)
    logs/<dist>-<version>.log       every command an install ran, with its whole output

Reuse means: the marker is present and the health check passes (metadata aliases an older
servekit did not write are added in place first). Anything else is a leftover, removed before a
fresh install. An install that fails removes what it made. Where torch comes from is decided per
install (``servekit.engines.torch_source``).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from servekit import paths
from servekit.atomic import append_text, file_lock
from servekit.atomic import write_json_atomic
from servekit.engines.install_specs import InstallSpec, parse_requirement
from servekit.engines.common.process import CommandFailed, run_logged
from servekit.engines.metadata_alias import missing_aliases, write_aliases
from servekit.engines.torch_source import TorchSource, torch_source
from servekit.errors import ServekitError
from servekit.records import record

RECORD_VERSION = 1
RECORD_FILE = "record.json"
MARKER_FILE = "complete"

_PROBE = """
import importlib, importlib.metadata as md, json, sys
importlib.import_module(sys.argv[1])
dists = {}
for d in md.distributions():
    name = d.metadata["Name"]
    if name:
        dists[name.lower().replace("_", "-")] = d.version
print(json.dumps({"python": sys.version.split()[0], "executable": sys.executable, "packages": dists}))
"""


class EnvironmentBroken(ServekitError):
    """An engine environment exists but cannot be used as it is."""


@record
class EngineEnv:
    """One engine environment on disk."""

    spec: InstallSpec
    root: Path

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def record_path(self) -> Path:
        return self.root / RECORD_FILE

    @property
    def marker(self) -> Path:
        return self.root / MARKER_FILE

    @property
    def log(self) -> Path:
        return self.root.parent / "logs" / f"{self.spec.key}.log"

    @property
    def lock_path(self) -> Path:
        return self.root.parent / f"{self.spec.key}.lock"

    def is_complete(self) -> bool:
        return self.marker.is_file() and self.python.exists()

    def record(self) -> dict[str, Any] | None:
        """The stored record, or None when missing, unreadable or from a newer servekit."""
        return _read_record(self.record_path)


def env_for(requirement: str | InstallSpec, root: Path | None = None) -> EngineEnv:
    spec = parse_requirement(requirement) if isinstance(requirement, str) else requirement
    base = Path(root) if root is not None else paths.engines_dir()
    return EngineEnv(spec=spec, root=base / spec.key)


def probe(env: EngineEnv) -> dict[str, Any]:
    """Import the engine inside its venv and report interpreter and package versions."""
    out = run_logged([str(env.python), "-c", _PROBE, env.spec.import_name])
    return json.loads(out.strip().splitlines()[-1])


def health_problem(env: EngineEnv) -> str | None:
    """None when the env imports its engine at the pinned version; else what is wrong."""
    if not env.python.exists():
        return f"no interpreter at {env.python}"
    try:
        facts = probe(env)
    except CommandFailed as exc:
        return f"importing {env.spec.import_name} fails: {exc.output.strip().splitlines()[-1:]}"
    except ValueError:
        return "the health probe printed no JSON"
    have = facts["packages"].get(env.spec.dist)
    if have is None:
        return f"distribution {env.spec.dist} is not installed"
    if have.split("+")[0] != env.spec.version:
        return f"{env.spec.dist} is {have}, expected {env.spec.version}"
    for alias, version in env.spec.aliases:
        if facts["packages"].get(alias) != version:
            return f"distribution metadata {alias}=={version} is missing (the engine looks itself up by it)"
    return None


def find_env(
    requirement: str | InstallSpec, *, check_health: bool = False, root: Path | None = None
) -> EngineEnv | None:
    """The finished environment for ``requirement``, or None; optionally health-checked."""
    env = env_for(requirement, root)
    if not env.is_complete() or env.record() is None:
        return None
    if check_health and health_problem(env) is not None:
        return None
    return env


@contextmanager
def _locked(env: EngineEnv) -> Iterator[None]:
    with file_lock(env.lock_path):
        yield



def _build(env: EngineEnv, python: str, torch: TorchSource) -> dict[str, Any]:
    """Create the venv and install into it; returns the record to store."""
    run_logged([python, "-m", "venv", str(env.venv)], log=env.log)
    pip = [str(env.python), "-m", "pip"]
    if env.spec.upgrade_pip:
        run_logged([*pip, "install", "--upgrade", "pip"], log=env.log)
    steps = env.spec.pip_steps(torch.source)
    for step in steps:
        run_logged([*pip, "install", *step], log=env.log)
    if env.spec.remove:
        run_logged([*pip, "uninstall", "-y", *env.spec.remove], log=env.log)
    write_aliases(env.venv, env.spec.aliases)
    problem = health_problem(env)
    if problem:
        raise EnvironmentBroken(
            f"{env.spec.requirement} installed but fails its health check: {problem}",
            fix=f"see {env.log}",
        )
    facts = probe(env)
    return {
        "record_version": RECORD_VERSION,
        "requirement": env.spec.requirement,
        "dist": env.spec.dist,
        "version": env.spec.version,
        "interpreter": {"python": facts["python"], "executable": str(env.python), "base": python},
        "steps": [list(step) for step in steps],
        "torch_source": torch.source if env.spec.torch_step is not None else None,
        "metadata_aliases": list(env.spec.metadata_aliases),
        "removed": list(env.spec.remove),
        "key_packages": {n: facts["packages"].get(n) for n in env.spec.key_packages},
        "packages": dict(sorted(facts["packages"].items())),
        "installed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


@record
class InstallOutcome:
    env: EngineEnv
    reused: bool


def _repair(env: EngineEnv) -> None:
    """Bring a finished environment up to what this servekit writes: its metadata aliases."""
    try:
        written = write_aliases(env.venv, env.spec.aliases)
    except OSError:
        return  # not a venv this can mend: the health check decides
    env_record = env.record()
    if written and env_record is not None:
        write_json_atomic(env.record_path, {**env_record, "metadata_aliases": list(env.spec.metadata_aliases)})


def _reusable(env: EngineEnv) -> bool:
    return env.is_complete() and not missing_aliases(env.venv, env.spec.aliases) \
        and health_problem(env) is None


def install(
    requirement: str | InstallSpec, *, force: bool = False, root: Path | None = None, python: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> InstallOutcome:
    """Install (or reuse) the environment for ``requirement``; safe to run concurrently.

    A finished environment that lacks what this servekit adds (metadata aliases) is repaired in
    place, not rebuilt. ``notify`` hears where torch comes from when that is not the index asked for.
    """
    env = env_for(requirement, root)
    if not force and _reusable(env):
        return InstallOutcome(env, reused=True)
    with _locked(env):
        if not force and env.is_complete():
            _repair(env)
            if health_problem(env) is None:
                return InstallOutcome(env, reused=True)  # finished meanwhile, or repaired
        if env.root.exists():
            shutil.rmtree(env.root)
        env.root.mkdir(parents=True)
        env.log.unlink(missing_ok=True)
        torch = torch_source(env.spec)
        if torch.note:
            append_text(env.log, torch.note + "\n")
            if notify is not None:
                notify(torch.note)
        try:
            env_record = _build(env, python or sys.executable, torch)
            write_json_atomic(env.record_path, env_record)
            write_json_atomic(env.marker, {"requirement": env.spec.requirement})
        except BaseException:
            shutil.rmtree(env.root, ignore_errors=True)
            raise
    return InstallOutcome(env, reused=False)


def remove(requirement: str | InstallSpec, *, root: Path | None = None) -> bool:
    """Delete the environment; False when there was none."""
    env = env_for(requirement, root)
    with _locked(env):
        if not env.root.exists():
            return False
        env.marker.unlink(missing_ok=True)  # never leave a half-deleted env looking complete
        shutil.rmtree(env.root)
    env.lock_path.unlink(missing_ok=True)
    return True


@record
class EnvStatus:
    key: str
    root: Path
    state: str  # "complete" | "incomplete" | "broken"
    record: dict[str, Any] | None


def list_envs(root: Path | None = None) -> list[EnvStatus]:
    """Every environment folder under the root, with its state (no imports are run)."""
    base = Path(root) if root is not None else paths.engines_dir()
    if not base.is_dir():
        return []
    out: list[EnvStatus] = []
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and p.name != "logs"):
        env_record = _read_record(folder / RECORD_FILE)
        if not (folder / MARKER_FILE).is_file():
            state = "incomplete"
        elif env_record is None or not (folder / "venv" / "bin" / "python").exists():
            state = "broken"
        else:
            state = "complete"
        out.append(EnvStatus(key=folder.name, root=folder, state=state, record=env_record))
    return out


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("record_version") != RECORD_VERSION:
        return None
    return data
