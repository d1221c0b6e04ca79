"""One entry point for Plans and the JSON API: facts + hardware profile + parallel sizes + argv
-> the memory plan and every "can it start" finding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from servekit.facts.model import ModelFacts
from servekit.findings import Finding, has_errors
from servekit.fit.checks import (
    check_cpu_head_size,
    check_device_count,
    check_divisibility,
    check_fit,
    check_precision,
    check_quant_method,
)
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import launch_settings
from servekit.fit.planner import FitReport, FitRequest, memory_model, plan_fit
from servekit.records import record

_QUANT_PRECISION = {"fp8": "fp8", "modelopt": "nvfp4", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4"}


FAILURE_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("memory", ("fit-",)),
    ("divisibility", ("tp-", "ep-", "pp-")),
    ("precision", ("precision-", "kv-", "cpu-head-size")),
    ("devices", ("world-size",)),
)
"""What a failed check is about, by the prefix of its finding code; any other code is ``flags``."""


def failure_kind(code: str) -> str:
    return next((kind for kind, prefixes in FAILURE_KINDS if code.startswith(prefixes)), "flags")


@record
class FitCheck:
    """A plan's fit: the report, when one could be made, and the findings."""

    report: FitReport | None
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        """No check failed (the launch is not known to fail; see ``fits`` for the verdict)."""
        return not has_errors(list(self.findings))

    @property
    def failed(self) -> tuple[str, ...]:
        """What failed, one name per kind: memory, divisibility, precision, devices, flags."""
        kinds = [failure_kind(f.code) for f in self.findings if f.severity == "error"]
        return tuple(dict.fromkeys(kinds))

    @property
    def fits(self) -> bool | None:
        """True: starts with room for its KV cache; False: a check failed; None: weights unknown."""
        if not self.ok:
            return False
        if self.report is None or not self.report.weights_known:
            return None
        return True

    @property
    def verdict(self) -> str:
        if self.failed:
            head = "DOES NOT FIT" if self.failed == ("memory",) else "WILL NOT START"
            return f"{head} ({', '.join(self.failed)})"
        return "fits" if self.fits else "unknown (weight bytes unknown)"

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "fits": self.fits,
            "verdict": self.verdict,
            "failed": list(self.failed),
            "report": self.report.to_dict() if self.report else None,
            "findings": [f.to_dict() for f in self.findings],
        }


def cpu_kv_space_gib(report: FitReport | None) -> int | None:
    """The KV space a CPU launch is given so that its pool is the planned one: the planned pool
    in whole GiB, the unit ``VLLM_CPU_KVCACHE_SPACE`` is read in (vLLM 0.32.0
    ``vllm/platforms/cpu.py``: ``int(os.environ["VLLM_CPU_KVCACHE_SPACE"]) * GiB_bytes``), at
    least 1; None when the plan leaves no memory for a pool."""
    if report is None or report.available_kv_gib <= 0:
        return None
    return max(1, int(report.available_kv_gib))


def precision_of(facts: ModelFacts, precision: str | None) -> str | None:
    if precision:
        return precision
    quant = facts.quantization
    if quant is None:
        return None
    if quant.algo and "fp4" in quant.algo.lower():
        return "nvfp4" if quant.method == "modelopt" else "mxfp4"
    return _QUANT_PRECISION.get(quant.method)


def approximate_weights(facts: ModelFacts) -> Finding:
    """The note that a plan's weight bytes are not summed from safetensors headers."""
    basis = facts.weights.basis if facts.weights is not None else None
    if basis:
        return Finding("note", "fit-estimated-weights",
                       f"weight bytes are {basis}, not summed from safetensors headers",
                       _exact_weights_fix(facts.model_id))
    return Finding("note", "fit-approximate-weights",
                   "weight bytes are a rounded public figure, not summed from safetensors headers",
                   "download the checkpoint for exact figures")


def _exact_weights_fix(model_id: str | None) -> str:
    if model_id and model_id.count("/") == 1 and not model_id.startswith((".", "/", "~")):
        return f"fetch the safetensors headers for exact figures (`servekit facts fetch {model_id}`)"
    return "put the checkpoint's *.safetensors files (their headers suffice) beside config.json"


def _fit_engine(engine: str, cpu: bool) -> str:
    """On a CPU, an engine with a CPU memory rule of its own (MAX) is planned by it; any other by vLLM's."""
    if not cpu:
        return engine
    native_hooks = memory_model("vllm-cpu", "cpu")[0]
    hooks = native_hooks if engine == "vllm-cpu" else memory_model(engine, "cpu")[0]
    return engine if hooks.cpu_rule is not None and hooks is not native_hooks else "vllm-cpu"


def check_plan_fit(
    facts: ModelFacts,
    hardware_profile: Mapping[str, Any],
    *,
    hardware_name: str = "hardware",
    argv: Sequence[str] = (),
    tp: int | None = None,
    pp: int | None = None,
    dp: int | None = None,
    engine: str = "vllm",
    precision: str | None = None,
    node_count: int = 1,
    cpu_kvcache_space_gib: float | None = None,
    engine_version: str | None = None,
    engine_env: Mapping[str, str] | None = None,
) -> FitCheck:
    """Plan memory for a launch and run every check. ``tp``/``pp``/``dp`` override the argv's;
    ``engine_version`` and ``engine_env`` (the launch's environment) select the release's memory
    rules (None: the newest release)."""
    launch = launch_settings(argv)
    launch = replace(
        launch,
        tp=tp if tp is not None else launch.tp,
        pp=pp if pp is not None else launch.pp,
        dp=dp if dp is not None else launch.dp,
    )
    device = device_from_profile(hardware_name, hardware_profile)
    findings: list[Finding] = []
    findings += check_device_count(launch, device, node_count)
    findings += check_divisibility(facts, launch)
    findings += check_precision(precision_of(facts, precision), device, kv_cache_dtype=launch.kv_cache_dtype)
    findings += check_quant_method(facts, device)
    cpu = engine == "vllm-cpu" or device.kind == "cpu"
    if cpu:
        findings += check_cpu_head_size(facts)
    report = None
    if not any(f.code.startswith("tp-") and f.severity == "error" for f in findings):
        request = FitRequest(
            facts=facts, device=device, launch=launch, engine=_fit_engine(engine, cpu),
            cpu_kvcache_space_gib=cpu_kvcache_space_gib, engine_version=engine_version,
            engine_env=dict(engine_env or {}),
        )
        report = plan_fit(request)
        if facts.weights is not None and not facts.weights.exact:
            findings.append(approximate_weights(facts))
        elif facts.weights is not None and facts.weights.estimated:
            parts = " and ".join(facts.weights.estimated)
            findings.append(Finding("note", "fit-estimated-parts",
                                    f"the checkpoint total is exact but its {parts} bytes are estimated",
                                    _exact_weights_fix(facts.model_id)))
        findings += [Finding("warning", "fit-kv-unmodelled", f"the memory model does not cover {what}",
                             "check the pool in the engine's start-up log ('GPU KV cache size') before relying on "
                             "the KV figures") for what in facts.unmodelled]
        if launch.spec_draft_model and not launch.uses_mtp:
            findings.append(Finding(
                "note", "fit-draft-weights",
                f"the draft network {launch.spec_draft_model}'s weights are not in the plan (its KV layers are)",
                "leave room for its checkpoint: lower --gpu-memory-utilization by its size over the device memory"))
        if report.weights_known or cpu:
            findings += check_fit(report, facts, launch, device,
                                  replan=lambda changed: plan_fit(replace(request, launch=changed)))
        else:
            findings.append(Finding("note", "fit-unknown-weights", "weight bytes unknown; the fit check was skipped",
                                    "download the checkpoint so its safetensors headers can be read"))
    return FitCheck(report=report, findings=tuple(findings))
