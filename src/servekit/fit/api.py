"""One entry point for Plans and the JSON API: facts + hardware profile + parallel sizes + argv
-> the memory plan and every "can it start" finding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from servekit.facts.model import ModelFacts
from servekit.fit.checks import (
    check_cpu_head_size,
    check_device_count,
    check_divisibility,
    check_fit,
    check_precision,
)
from servekit.fit.findings import Finding, has_errors
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import parse_vllm_argv
from servekit.fit.planner import FitReport, FitRequest, plan_fit

_QUANT_PRECISION = {"fp8": "fp8", "modelopt": "nvfp4", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4"}


@dataclass(frozen=True)
class FitCheck:
    report: FitReport | None
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not has_errors(list(self.findings))

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "report": self.report.to_dict() if self.report else None,
            "findings": [f.to_dict() for f in self.findings],
        }


def precision_of(facts: ModelFacts, precision: str | None) -> str | None:
    if precision:
        return precision
    quant = facts.quantization
    if quant is None:
        return None
    if quant.algo and "fp4" in quant.algo.lower():
        return "nvfp4" if quant.method == "modelopt" else "mxfp4"
    return _QUANT_PRECISION.get(quant.method)


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
) -> FitCheck:
    """Plan memory for a launch and run every check. ``tp``/``pp``/``dp`` override the argv's."""
    launch = parse_vllm_argv(argv)
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
    cpu = engine == "vllm-cpu" or device.kind == "cpu"
    if cpu:
        findings += check_cpu_head_size(facts)
    report = None
    if not any(f.code.startswith("tp-") and f.severity == "error" for f in findings):
        request = FitRequest(
            facts=facts, device=device, launch=launch, engine="vllm-cpu" if cpu else engine,
            cpu_kvcache_space_gib=cpu_kvcache_space_gib,
        )
        report = plan_fit(request)
        if facts.weights is not None and not facts.weights.exact:
            findings.append(Finding("note", "fit-approximate-weights",
                                    "weight bytes are a rounded public figure, not summed from safetensors headers",
                                    "download the checkpoint for exact figures"))
        if report.weights_known or cpu:
            findings += check_fit(report, facts, launch, device,
                                  replan=lambda changed: plan_fit(replace(request, launch=changed)))
        else:
            findings.append(Finding("note", "fit-unknown-weights", "weight bytes unknown; the fit check was skipped",
                                    "download the checkpoint so its safetensors headers can be read"))
    return FitCheck(report=report, findings=tuple(findings))
