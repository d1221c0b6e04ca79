"""A plan for a model no recipe names, built from its config.json and safetensors headers.

The plan is an ordinary ``Plan`` (one ``vllm serve`` process on one node, the brand's default
image, the default install steps), so every surface renders and checks it as it does a recipe's.
Each argument says which config key or fit result put it there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.app.deploy_checks import deploy_checks
from servekit.app.flag_checks import flag_checks
from servekit.app.generic_nodes import Topology, checked_topology, network_env, node_processes, size_args
from servekit.app.generic_rules import (
    RECIPE_NOTE,
    Architecture,
    architecture_of,
    cpu_env,
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
from servekit.app.run_site import RunSite
from servekit.catalog.domain import ModelSection
from servekit.engines.registry import native_engine
from servekit.engines.vllm.architectures import supported_architectures
from servekit.fit import FitCheck, check_plan_fit, device_from_profile
from servekit.fit.api import cpu_kv_space_gib
from servekit.fit.memory import GIB
from servekit.hardware import profile_of
from servekit.records import record
from servekit.synthesis.docker import default_image, docker_on
from servekit.synthesis.install import platform_steps
from servekit.synthesis.plan import Arg, Docker, Plan, Selection


@record
class Layout:
    """The tensor parallel size and context chosen, with the fit check of that launch."""

    tp: int
    max_model_len: int
    check: FitCheck
    fits: bool
    kv_space_gib: int | None = None
    """VLLM_CPU_KVCACHE_SPACE on a CPU: the KV pool the fit planned, in whole GiB."""


@record
class _Target:
    """What one fit check runs against: the hardware, the layout asked for, the CPU KV space."""

    profile: dict[str, Any]
    hardware: str
    topology: Topology
    kv_space_gib: int | None = None


def _argv(model: str, tp: int, max_model_len: int, pp: int | None = None) -> list[str]:
    argv = ["vllm", "serve", model, "--tensor-parallel-size", str(tp), "--max-model-len", str(max_model_len)]
    return argv + (["--pipeline-parallel-size", str(pp)] if pp and pp > 1 else [])


def _check(model: GenericModel, target: _Target, tp: int, length: int) -> FitCheck:
    return check_plan_fit(model.facts, target.profile, hardware_name=target.hardware,
                          argv=_argv(model.ref.serve_name, tp, length, target.topology.pp),
                          node_count=target.topology.nodes, cpu_kvcache_space_gib=target.kv_space_gib)


def _layout(model: GenericModel, target: _Target) -> Layout:
    """The smallest tensor parallel size (the one asked for, when one is) that divides the heads
    and leaves one request at least ``wanted_context`` tokens, with the longest context that fits."""
    facts = model.facts
    devices = device_from_profile(target.hardware, target.profile).count
    asked = target.topology.tp
    candidates = [asked] if asked else (tp_candidates(facts, devices) or [1])
    limit = model_context(facts)
    for tp in candidates:
        check = _check(model, target, tp, limit)
        report = check.report
        if report is None or report.available_kv_gib <= 0 or report.longest_context < wanted_context(facts):
            continue
        length = planned_context(report.longest_context, limit)
        final = check if length == limit else _check(model, target, tp, length)
        return Layout(tp, length, final, final.ok, target.kv_space_gib)
    tp = candidates[-1]
    return Layout(tp, limit, _check(model, target, tp, limit), False, target.kv_space_gib)


def choose_layout(model: GenericModel, profile: dict[str, Any], hardware: str,
                  topology: Topology = Topology()) -> Layout:
    """The layout of ``topology`` (sizes it leaves open are planned); on a CPU the KV space is
    the pool the fit planned at that layout, in whole GiB, and the context is planned for it."""
    target = _Target(profile, hardware, topology)
    layout = _layout(model, target)
    space = cpu_kv_space_gib(layout.check.report)
    if profile_of(profile, hardware).kind != "cpu" or space is None:
        return layout
    return _layout(model, replace(target, topology=replace(topology, tp=layout.tp), kv_space_gib=space))


def _weights_text(model: GenericModel) -> str:
    weights = model.facts.weights
    gib = (weights.total if weights else 0) / GIB
    return f"weights {gib:.1f} GiB ({model.weights_basis})"


def _tp_reason(model: GenericModel, layout: Layout, asked: Topology, hardware: str, devices: str) -> str:
    heads = f"config.json: {heads_text(model.facts)}"
    if asked.tp:
        return f"--tp {layout.tp}; {heads}"
    if asked.spans_nodes:
        return (f"--nodes {asked.nodes} of {hardware} ({devices}) / --pp {asked.pp or 1} -> every device: "
                f"--tensor-parallel-size {layout.tp}; {heads}")
    return (f"{heads}; {_weights_text(model)} -> --tensor-parallel-size {layout.tp}, the smallest that fits "
            f"{hardware} ({devices}) and divides the heads")


def _args(model: GenericModel, arch: Architecture, layout: Layout, topology: Topology, tp_reason: str,
          hardware: str) -> list[Arg]:
    args: list[Arg] = []
    ref, facts = model.ref, model.facts
    if ref.revision:
        args.append(Arg("--revision", ref.revision, f"{ref.text}: revision {ref.revision}"))
    reason = remote_code_reason(model.config, arch)
    if reason:
        args.append(Arg("--trust-remote-code", None, reason))
    args += size_args(topology, layout.tp, tp_reason)
    limit = model_context(facts)
    fitted = ("the model's whole context fits" if layout.max_model_len >= limit
              else "the longest context one request fits")
    args.append(Arg("--max-model-len", layout.max_model_len,
                    f"config.json: max_position_embeddings={facts.max_position_embeddings or 'unset'}; fit: "
                    f"{fitted} at tensor parallel size {layout.tp} on {hardware} -> --max-model-len "
                    f"{layout.max_model_len}"))
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


def _docker(profile: dict[str, Any], hardware: str, nodes: int = 1) -> Docker:
    """The platform's own image and container rules (several machines: the host network)."""
    hw = profile_of(profile, hardware)
    return docker_on(hw, *default_image(hw), nodes=nodes)


def generic_plan(model: GenericModel, profile: dict[str, Any], hardware: str, *,
                 hardware_note: str | None = None, engine: str = "vllm",
                 topology: Topology = Topology(), site: RunSite = RunSite()) -> tuple[Plan, dict[str, Any]]:
    """The plan for ``model`` on ``hardware`` (one node, or ``topology.nodes``) and its checks
    (``{"fit": [...], "flags": [...], "facts": {...}}``)."""
    table = supported_architectures()
    arch = architecture_of(model.config, table.kinds, table.previously)
    hw = profile_of(profile, hardware)
    device = device_from_profile(hardware, profile)
    asked, topology = topology, checked_topology(topology, device.count, cpu=hw.kind == "cpu")
    layout = choose_layout(model, profile, hardware, topology)
    why_tp = _tp_reason(model, layout, asked, hardware, f"{device.count} x {device.memory_gib:.0f} GiB")
    args = tuple(_args(model, arch, layout, topology, why_tp, hardware))
    env = (*cpu_env(layout.kv_space_gib), *(network_env() if topology.spans_nodes else ()))
    processes = node_processes(model.ref.serve_name, args, env, topology)

    known_quant = native_engine().flag_catalog().registries.get("quantization_methods", ())
    notes = _notes(model, arch, table.version, tuple(known_quant))
    if hardware_note:
        notes.insert(0, hardware_note)
    docker = _docker(profile, hardware, topology.nodes)
    steps = platform_steps(ModelSection.of({}), hw, docker.image, image_source=docker.source)
    selection = Selection(recipe_id=model.ref.label, hardware=hardware, variant="default",
                          strategy=topology.strategy, node_count=topology.nodes, engine=engine)
    plan = Plan(selection=selection, deploy_type="multi_node" if topology.spans_nodes else "single_node",
                model_id=model.ref.serve_name, processes=processes, docker=docker, env=env, install=steps,
                notes=tuple(notes))
    checks = {"fit": [{"role": processes[0].role, **layout.check.to_dict()}],
              "flags": flag_checks(plan, None, hw, site=site), "deploy": deploy_checks(plan, hw, site),
              "facts": _facts_doc(model, arch)}
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
