"""A plan for a model no recipe names, built from its config.json and safetensors headers.

The plan is an ordinary ``Plan`` (one ``vllm serve`` process on one node, the brand's default
image, the default install steps), so every surface renders and checks it as it does a recipe's.
Each argument says which config key or fit result put it there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.app.generic_rules import (
    RECIPE_NOTE,
    Architecture,
    architecture_of,
    heads_text,
    model_context,
    planned_context,
    quantization_method,
    quantization_note,
    remote_code_reason,
    tp_candidates,
    wanted_context,
)
from servekit.app.model_facts import GenericModel
from servekit.catalog.domain import ModelSection
from servekit.engines.vllm.architectures import supported_architectures
from servekit.fit import FitCheck, check_plan_fit, device_from_profile
from servekit.fit.memory import GIB
from servekit.hardware import profile_of
from servekit.synthesis.docker import DEFAULT_IMAGES, XPU_IMAGE
from servekit.synthesis.install import docker_step, pip_step
from servekit.synthesis.plan import Arg, Docker, Plan, Process, Selection

STRATEGY = "single_node_tp"


@dataclass(frozen=True)
class Layout:
    """The tensor parallel size and context chosen, with the fit check of that launch."""

    tp: int
    max_model_len: int
    check: FitCheck
    fits: bool


def _argv(model: str, tp: int, max_model_len: int) -> list[str]:
    return ["vllm", "serve", model, "--tensor-parallel-size", str(tp), "--max-model-len", str(max_model_len)]


def _check(model: GenericModel, profile: dict[str, Any], hardware: str, tp: int, length: int) -> FitCheck:
    return check_plan_fit(model.facts, profile, hardware_name=hardware,
                          argv=_argv(model.ref.serve_name, tp, length))


def choose_layout(model: GenericModel, profile: dict[str, Any], hardware: str) -> Layout:
    """The smallest tensor parallel size that divides the heads and leaves one request at least
    ``wanted_context`` tokens, with the longest context that fits at that size."""
    facts = model.facts
    devices = device_from_profile(hardware, profile).count
    candidates = tp_candidates(facts, devices) or [1]
    limit = model_context(facts)
    for tp in candidates:
        check = _check(model, profile, hardware, tp, limit)
        report = check.report
        if report is None or report.available_kv_gib <= 0 or report.longest_context < wanted_context(facts):
            continue
        length = planned_context(report.longest_context, limit)
        final = check if length == limit else _check(model, profile, hardware, tp, length)
        return Layout(tp, length, final, final.ok)
    tp = candidates[-1]
    return Layout(tp, limit, _check(model, profile, hardware, tp, limit), False)


def _weights_text(model: GenericModel) -> str:
    weights = model.facts.weights
    gib = (weights.total if weights else 0) / GIB
    return f"weights {gib:.1f} GiB ({model.weights_basis})"


def _args(model: GenericModel, arch: Architecture, layout: Layout, hardware: str, devices: str) -> list[Arg]:
    args: list[Arg] = []
    ref, facts = model.ref, model.facts
    if ref.revision:
        args.append(Arg("--revision", ref.revision, f"{ref.text}: revision {ref.revision}"))
    reason = remote_code_reason(model.config, arch)
    if reason:
        args.append(Arg("--trust-remote-code", None, reason))
    if layout.tp > 1:
        args.append(Arg("--tensor-parallel-size", layout.tp,
                        f"config.json: {heads_text(facts)}; {_weights_text(model)} -> --tensor-parallel-size "
                        f"{layout.tp}, the smallest that fits {hardware} ({devices}) and divides the heads"))
    limit = model_context(facts)
    why = ("the model's whole context fits" if layout.max_model_len >= limit
           else "the longest context one request fits")
    args.append(Arg("--max-model-len", layout.max_model_len,
                    f"config.json: max_position_embeddings={facts.max_position_embeddings or 'unset'}; fit: "
                    f"{why} at tensor parallel size {layout.tp} on {hardware} -> --max-model-len {layout.max_model_len}"))
    return args


def _notes(model: GenericModel, arch: Architecture, version: str, known_quant: tuple[str, ...]) -> list[str]:
    facts = model.facts
    notes = [RECIPE_NOTE]
    if arch.name is None:
        notes.append("config.json names no architecture; vLLM cannot pick an implementation")
    elif arch.kind is None:
        dropped = f" (dropped after vLLM {arch.dropped_after})" if arch.dropped_after else ""
        notes.append(f"architecture {arch.name} is not implemented in vLLM {version}{dropped}; vLLM falls back "
                     "to the Transformers backend with the checkpoint's own code")
    else:
        notes.append(f"architecture {arch.name}: implemented in vLLM {version} ({arch.kind})")
    notes.append(f"config.json: torch_dtype={facts.dtype} -> served in {facts.dtype} (vLLM's --dtype auto)")
    quant = quantization_note(quantization_method(model.config), known_quant, version)
    if quant:
        notes.append(quant[0])
    notes.append(_weights_text(model) + (
        f"; exact bytes come from the safetensors headers: `servekit facts fetch {model.ref.repo_id}`"
        if model.missing and model.ref.repo_id else ""))
    if model.fetched:
        notes.append(f"facts of {model.ref.label} fetched from the hub into the caches (config.json, safetensors headers)")
    return notes


def _docker(profile: dict[str, Any], hardware: str) -> Docker:
    hw = profile_of(profile, hardware)
    if hw.platform == "xpu":
        image, source = XPU_IMAGE, "default image (Intel XPU)"
    else:
        image, source = DEFAULT_IMAGES.get(hw.image_key), f"default image ({hw.image_key})"
    devices = hw.container
    return Docker(image, devices.argv, devices.lines, devices.runtime, source)


def generic_plan(model: GenericModel, profile: dict[str, Any], hardware: str, *,
                 hardware_note: str | None = None, engine: str = "vllm") -> tuple[Plan, dict[str, Any]]:
    """The plan for ``model`` on ``hardware`` and its checks (``{"fit": [...]}``)."""
    table = supported_architectures()
    arch = architecture_of(model.config, table.kinds, table.previously)
    layout = choose_layout(model, profile, hardware)
    device = device_from_profile(hardware, profile)
    devices = f"{device.count} x {device.memory_gib:.0f} GiB"
    args = tuple(_args(model, arch, layout, hardware, devices))
    process = Process(role="serve", model=model.ref.serve_name, args=args, env=())
    from servekit.engines.registry import native_engine

    known_quant = native_engine().flag_catalog().registries.get("quantization_methods", ())
    notes = _notes(model, arch, table.version, tuple(known_quant))
    if hardware_note:
        notes.insert(0, hardware_note)
    docker = _docker(profile, hardware)
    steps = tuple(s for s in (pip_step(ModelSection.of({})), docker_step(ModelSection.of({}), docker.image)) if s is not None)
    selection = Selection(recipe_id=model.ref.label, hardware=hardware, variant="default", strategy=STRATEGY,
                          engine=engine)
    plan = Plan(selection=selection, deploy_type="single_node", model_id=model.ref.serve_name,
                processes=(process,), docker=docker, install=steps, notes=tuple(notes))
    checks = {"fit": [{"role": "serve", **layout.check.to_dict()}], "facts": _facts_doc(model, arch)}
    return plan, checks


def _facts_doc(model: GenericModel, arch: Architecture) -> dict[str, Any]:
    weights = model.facts.weights
    return {
        "source": str(model.config_path),
        "architecture": arch.name,
        "vllm_kind": arch.kind,
        "weights_bytes": weights.total if weights else None,
        "weights_exact": bool(weights and weights.exact),
        "weights_basis": model.weights_basis,
        "missing": list(model.missing),
    }
