"""A plan explained for people: what runs, with which image and env, and why each flag is there."""

from __future__ import annotations

from typing import Any

from servekit.synthesis import shell
from servekit.synthesis.plan import Plan, Process


def why(source: str) -> str:
    """A short reason for a provenance key."""
    parts = source.split(".")
    if source.startswith("features."):
        if ".modes." in source:
            return f"feature {parts[1]}, mode {parts[3]}" + (
                f" (on {parts[5]})" if ".hardware_overrides." in source else "")
        return f"feature {parts[1]}" + (f" (on {parts[3]})" if ".hardware_overrides." in source else "")
    if source.startswith("variants."):
        if ".hardware_overrides." in source:
            return f"variant {parts[1]} on {parts[3]}"
        if source.endswith(".vram_minimum_gb"):
            return f"variant {parts[1]} fits one GPU or needs the node (vram_minimum_gb)"
        return f"variant {parts[1]}"
    if source.startswith("strategies/"):
        return f"strategy {source.split('/', 1)[1].split('.')[0]}"
    if source.startswith("strategy_overrides."):
        return f"recipe override for strategy {parts[1]}"
    if source.startswith("hardware_overrides."):
        return f"recipe override for {parts[1]} hardware"
    if source.startswith("model."):
        return "recipe base arguments" if source.endswith("base_args") else "recipe model settings"
    if source.startswith(("kv_store/", "taxonomy.kv_offload")):
        return "KV offload option"
    if source.startswith("taxonomy.hardware_profiles"):
        return "whole node (GPU count)"
    return source


def _process_lines(plan: Plan, proc: Process) -> list[str]:
    title = proc.role if proc.rank == 0 else f"{proc.role.replace('_node', '')} (node rank {proc.rank})"
    flags = proc.argv()[len(proc.program) + 1:]
    lines = [f"## {title}", shell.command(" ".join((*proc.program, proc.model)), flags)]
    env = proc.env_map()
    if env:
        lines.append("env:")
        lines += [f"  {k}={shell.text(v)}  # {why(next(e.source for e in proc.env if e.name == k))}"
                  for k, v in env.items()]
    lines.append("why:")
    for arg in proc.args:
        shown = " ".join(shell.quote(t) for t in arg.tokens())
        lines.append(f"  {shown[:60]}{'…' if len(shown) > 60 else ''}  <- {why(arg.source)} [{arg.source}]")
    return lines


def explain(plan: Plan) -> list[str]:
    """Plain text lines describing a plan (the CLI adds colour)."""
    sel = plan.selection
    lines = [f"# {sel.recipe_id} on {sel.hardware}: variant {sel.variant}, strategy {sel.strategy}, "
             f"{sel.node_count} node(s), {plan.deploy_type}",
             f"model: {plan.model_id}",
             f"features: {', '.join(sel.features) or '(none)'}"]
    if sel.kv_offload:
        lines.append(f"kv offload: {sel.kv_offload}")
    lines.append(f"image: {plan.docker.image}  ({plan.docker.source})")
    if plan.min_version:
        lines.append(f"min vLLM version: {plan.min_version}  ({', '.join(plan.min_version_sources)})")
    lines.append("install:")
    for step in plan.install:
        lines += [f"  [{step.kind}] {line}" for line in step.command.splitlines()]
        if step.note:
            lines.append(f"      note: {step.note}")
    for proc in plan.processes:
        lines += _process_lines(plan, proc)
    router: dict[str, Any] = dict(plan.router or ())
    if router.get("command"):
        lines += ["## router", router["command"]]
    master, store = plan.extra("master"), plan.extra("store")
    if master:
        lines += ["## mooncake master", master["command"]]
    if store:
        lines += ["## mooncake store", store["command"]]
    if plan.extra("mooncake_config"):
        import json

        lines += ["## mooncake config ($MOONCAKE_CONFIG_PATH)", json.dumps(plan.extra("mooncake_config"), indent=2)]
    for note in plan.notes:
        lines.append(f"note: {note}")
    return lines
