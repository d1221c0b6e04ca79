"""Which pre-compile step each engine gets here, or why it is skipped.

Every engine describes its step as data (``Engine.precompile``): boot the server once, run the
steps of its translated launch, or nothing. The step runs only where it can do real work: what
it runs in must be here (a local engine environment, ``servekit engine install``, or a vendor
module), and the plan's accelerator must be on this machine unless the engine compiles for a
target without it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from servekit.engines.common.engine import Engine
from servekit.engines.common.specs import BOOT, COMPILES_FOR_TARGET, NO_ACCELERATOR, NOTHING, PrecompileSpec
from servekit.engines.common.translation import DialectContext
from servekit.engines.environments import EngineEnv, find_env
from servekit.engines.registry import get_engine
from servekit.hardware.lookup import profile_of
from servekit.records import record
from servekit.warm.hub import HubSettings
from servekit.warm.precompile import SKIPPED, BootOptions, StepResult, boot_server, engine_environment, run_step

# The tool whose presence shows that a platform's accelerator is on this machine.
_PLATFORM_TOOLS = {
    "cuda": "nvidia-smi",
    "rocm": "amd-smi",
    "xpu": "xpu-smi",
    "ascend": "npu-smi",
    "qaic": "qaic-util",
    "tpu": None,
}
CPU = "cpu"  # the kind of a CPU hardware profile, and the hardware id of a CPU host


@record
class EngineTarget:
    """One engine launch from the plan: the vLLM-form argv and its env."""

    engine: str  # an engine id from servekit.engines.registry
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    role: str = "serve"


@record
class StepContext:
    settings: HubSettings
    hardware: str | None = None  # taxonomy id; None = this machine (an explicit command)
    profile: Mapping[str, Any] | None = None
    target: str | None = None  # compile target, for engines that compile without the hardware
    boot: BootOptions = BootOptions()


def runs_on_cpu(ctx: StepContext) -> bool:
    """The plan's hardware is CPUs: this machine (no hardware named), or a profile of kind cpu."""
    if ctx.hardware is None or ctx.hardware == CPU:
        return True
    return ctx.profile is not None and profile_of(ctx.profile, ctx.hardware).kind == CPU


def accelerator_here(ctx: StepContext) -> str | None:
    """None when the plan's hardware is on this machine; else a sentence saying what is missing."""
    if runs_on_cpu(ctx):
        return None
    profile = profile_of(ctx.profile, ctx.hardware)
    brand = profile.brand.lower()
    tool = _PLATFORM_TOOLS.get(profile.platform, "nvidia-smi")
    if tool and shutil.which(tool):
        return None
    return f"the plan targets {ctx.hardware} ({brand or 'accelerator'}), which this machine does not have"


def _no_accelerator_tools() -> bool:
    return not any(shutil.which(t) for t in _PLATFORM_TOOLS.values() if t)


def _skip(spec: PrecompileSpec, engine: Engine, reason: str) -> StepResult:
    return StepResult(spec.name, engine.id, SKIPPED, reason=reason)


def _accelerator_problem(spec: PrecompileSpec, ctx: StepContext) -> str | None:
    """Why the step cannot run for lack of the plan's accelerator, or None."""
    if spec.accelerator == NO_ACCELERATOR:
        return None
    missing = accelerator_here(ctx)
    if missing is None:
        return None
    if spec.accelerator == COMPILES_FOR_TARGET:
        if ctx.target:
            return None
        return f"{missing}; pass --target auto (or e.g. cuda:sm_90) to compile for it without it"
    return f"{missing}; run warm-cache on the deployment host"


def _environment(spec: PrecompileSpec, ctx: StepContext) -> EngineEnv | None:
    if spec.environment is None or (spec.cpu_environment and not runs_on_cpu(ctx)):
        return None
    return find_env(spec.environment)


def _boot_python(spec: PrecompileSpec, ctx: StepContext) -> Path | None:
    explicit = os.environ.get(spec.python_override) if spec.python_override else None
    if explicit:
        return Path(explicit)
    env = _environment(spec, ctx)
    return env.python if env else None


def boot_step(engine: Engine, target: EngineTarget, ctx: StepContext) -> StepResult:
    spec = engine.precompile
    problem = _accelerator_problem(spec, ctx)
    if problem:
        return _skip(spec, engine, problem)
    python = _boot_python(spec, ctx)
    if python is None:
        return _skip(spec, engine, spec.missing_reason)
    return boot_server(engine, python, target.argv, ctx.settings, target.env, ctx.boot)


def _program(argv: Sequence[str], env: EngineEnv | None) -> tuple[str, ...]:
    """The step's program from the engine environment, or this interpreter for a bare ``python``."""
    words = tuple(str(w) for w in argv)
    if env is not None and words:
        return (str(env.venv / "bin" / words[0]), *words[1:])
    return (sys.executable, *words[1:]) if words and words[0] in ("python", "python3") else words


def command_steps(engine: Engine, target: EngineTarget, ctx: StepContext) -> StepResult:
    spec = engine.precompile
    env = _environment(spec, ctx)
    if (spec.environment is not None and env is None) or (
        spec.module is not None and importlib.util.find_spec(spec.module) is None
    ):
        return _skip(spec, engine, spec.missing_reason)
    problem = _accelerator_problem(spec, ctx)
    if problem:
        return _skip(spec, engine, problem)
    options: dict[str, str] = {"target": ctx.target} if ctx.target and spec.accelerator == COMPILES_FOR_TARGET else {}
    if ctx.hardware in (None, CPU) and _no_accelerator_tools():
        options.update(spec.cpu_options)  # an explicit command on a machine without accelerators
    context = DialectContext(hardware=ctx.profile, hardware_id=ctx.hardware, env=dict(target.env), options=options)
    launch = engine.translate(list(target.argv), context)
    run_env = engine_environment(ctx.settings, target.env)
    results = [
        run_step(step.name, engine.id, _program(step.argv, env), run_env, spec.timeout_s) for step in launch.precompile
    ]
    if not results:
        return _skip(spec, engine, f"the {engine.id} plan has no {spec.name} step")
    failed = [r for r in results if r.status != "done"]
    return failed[0] if failed else results[-1]


def planned(targets: Sequence[EngineTarget]) -> list[StepResult]:
    """What a real run would pre-compile, for a dry run."""
    out = []
    for name in dict.fromkeys(t.engine for t in targets):
        engine = get_engine(name)
        out.append(_skip(engine.precompile, engine, f"dry run: {engine.precompile.planned}"))
    return out


def precompile(targets: Sequence[EngineTarget], ctx: StepContext) -> list[StepResult]:
    """One step per engine: the first launch of each engine stands for the rest."""
    seen: set[str] = set()
    results = []
    for target in targets:
        if target.engine in seen:
            continue
        seen.add(target.engine)
        engine = get_engine(target.engine)
        kind = engine.precompile.kind
        if kind == BOOT:
            results.append(boot_step(engine, target, ctx))
        elif kind == NOTHING:
            results.append(_skip(engine.precompile, engine, engine.precompile.missing_reason))
        else:
            results.append(command_steps(engine, target, ctx))
    return results
