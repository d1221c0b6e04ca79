"""servekit's fit prediction for a run: the model's facts, the hardware's profile and the
server's native argv through ``servekit.fit``, and the figures ``verify`` compares with the log."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from servekit.engines.registry import get_engine, native_engine
from servekit.errors import ServekitError
from servekit.launch.launch_plan import LaunchPlan

KV_BYTES_OPTION = "--kv-cache-memory-bytes"


def model_facts(model: str) -> Any:
    """Facts of a local model directory, or of a checkpoint id (shipped or cached); None when unknown."""
    from servekit.facts import facts_from_dir, resolve_model

    try:
        if Path(model).is_dir():
            return facts_from_dir(Path(model))
        return resolve_model(model).facts
    except (ServekitError, OSError, ValueError):
        return None


def kv_space_env() -> str | None:
    """The variable giving the CPU KV pool in GiB, as the native engine names it (the plan's env is
    in its form)."""
    return native_engine().launch.kv_space_env


def cpu_space_gib(env: Mapping[str, str]) -> float | None:
    name = kv_space_env()
    value = env.get(name) if name else None
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def predict(plan: LaunchPlan, profile: Mapping[str, Any], hardware_name: str) -> Any:
    """The fit check of the plan's (first) engine server (``FitCheck``), or None without facts."""
    from servekit.fit.api import check_plan_fit

    facts = model_facts(plan.model)
    if facts is None:
        return None
    server = plan.engine_server
    return check_plan_fit(facts, profile, hardware_name=hardware_name, argv=list(server.vllm_argv),
                          engine=plan.engine, cpu_kvcache_space_gib=cpu_space_gib(server.env))


def predicted_figures(fit: Any) -> dict[str, Any]:
    report = getattr(fit, "report", None)
    if report is None:
        return {}
    return {"kv_tokens": report.kv_tokens, "max_concurrency": round(report.max_concurrency, 2),
            "weights_gib": round(report.weights_gib_per_rank, 4), "kv_gib": round(report.available_kv_gib, 4),
            "block_size": report.block_size, "max_model_len": report.max_model_len}


def pinned_kv_space(plan: LaunchPlan, fit: Any) -> dict[str, str]:
    """The env that makes a CPU server's KV pool the one predicted: the engine's KV-space
    variable set to the predicted pool (``servekit.fit.api.cpu_kv_space_gib``). With it the
    engine neither sizes the pool from the memory free when it starts nor refuses to start when
    other processes hold more than its share, so the measured pool is the prediction.

    Empty when the plan already sets the space (the variable or ``--kv-cache-memory-bytes``),
    when it has several engine servers (one prediction does not size them all), when the engine
    has no such variable, or when the prediction leaves no memory for a pool."""
    from servekit.fit.api import cpu_kv_space_gib

    name = get_engine(plan.engine).launch.kv_space_env
    if not name or len(plan.engines) != 1:
        return {}
    server = plan.engine_server
    if name in server.env or any(w.split("=", 1)[0] == KV_BYTES_OPTION for w in server.vllm_argv):
        return {}
    gib = cpu_kv_space_gib(getattr(fit, "report", None))
    return {name: str(gib)} if gib is not None else {}
