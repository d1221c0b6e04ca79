"""``servekit fit`` as a function of plain values: resolve the model and hardware, plan, check."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from servekit.errors import SelectionError, ServekitError
from servekit.fit.api import FitCheck, check_plan_fit
from servekit.fit.findings import Finding
from servekit.fit.planner import ENGINES, FitReport


@dataclass
class FitOptions:
    model: str
    hardware: str
    variant: str | None = None
    strategy: str | None = None
    tp: int | None = None
    pp: int | None = None
    max_model_len: str | None = None
    kv_cache_dtype: str | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    engine: str = "vllm"
    nodes: int = 1
    cpu_kvcache_space_gib: float | None = None
    catalog: str | None = None
    extra_args: list[str] = field(default_factory=list)


def _recipe_argv(recipe: dict[str, Any], variant: str, hardware: str) -> list[str]:
    """The recipe's own memory-relevant args for this variant and hardware."""
    doc = (recipe.get("variants") or {}).get(variant) or {}
    argv = [str(a) for a in (recipe.get("model") or {}).get("base_args") or []]
    argv += [str(a) for a in doc.get("extra_args") or []]
    override = (doc.get("hardware_overrides") or {}).get(hardware) or {}
    argv += [str(a) for a in override.get("extra_args") or []]
    return argv


def _plan_argv(docs: Any, recipe_id: str, variant: str | None, opts: FitOptions) -> list[str]:
    """The argv servekit's own plan renders for this recipe, hardware and variant."""
    from servekit.synthesis.render import render_plan
    from servekit.synthesis.resolve import resolve_selection
    from servekit.synthesis.synthesize import synthesize

    selection = resolve_selection(
        docs, recipe_id, hardware=opts.hardware, variant=variant, strategy=opts.strategy,
        node_count=opts.nodes if opts.nodes > 1 else None,
    )
    rendering = render_plan(synthesize(docs, selection))
    argv = rendering.get("argv") or rendering.get("head_argv") or (rendering.get("prefill") or {}).get("argv")
    return [str(a) for a in argv or []]


def _user_argv(opts: FitOptions) -> list[str]:
    argv = list(opts.extra_args)
    pairs = [
        ("--max-model-len", opts.max_model_len),
        ("--kv-cache-dtype", opts.kv_cache_dtype),
        ("--gpu-memory-utilization", opts.gpu_memory_utilization),
        ("--max-num-seqs", opts.max_num_seqs),
    ]
    for name, value in pairs:
        if value is not None:
            argv += [name, str(value)]
    return argv


def _check(docs: Any, profile: dict[str, Any], opts: FitOptions, variant: str | None) -> tuple[FitCheck, dict]:
    from servekit.facts.resolve import resolve_model

    resolved = resolve_model(opts.model, variant=variant, recipes=docs.recipes)
    argv: list[str] = []
    if resolved.recipe_id and opts.tp is None:
        # the launch servekit would plan: tensor parallel size, recipe and hardware overrides
        argv += _plan_argv(docs, resolved.recipe_id, variant, opts)
    elif resolved.recipe_id:
        # an explicit --tp describes the user's own launch; keep the recipe's memory options
        argv += _recipe_argv(docs.recipes[resolved.recipe_id], resolved.variant or "default", opts.hardware)
    argv += _user_argv(opts)
    check = check_plan_fit(
        resolved.facts,
        profile,
        hardware_name=opts.hardware,
        argv=argv,
        tp=opts.tp,
        pp=opts.pp,
        engine=opts.engine,
        precision=(resolved.variant_doc or {}).get("precision"),
        node_count=opts.nodes,
        cpu_kvcache_space_gib=opts.cpu_kvcache_space_gib,
    )
    context = {
        "model": opts.model,
        "checkpoint": resolved.facts.model_id,
        "facts_source": resolved.facts.source,
        "recipe": resolved.recipe_id,
        "variant": resolved.variant,
        "hardware": opts.hardware,
        "argv": argv,
    }
    return check, context


def _variants_that_fit(docs: Any, profile: dict[str, Any], opts: FitOptions, current: str) -> list[str]:
    """Other variants of the recipe whose planned launch fits this hardware."""
    out = []
    for key in (docs.recipes[opts.model].get("variants") or {}):
        if key == current:
            continue
        try:
            check, _ = _check(docs, profile, opts, key)
        except ServekitError:  # the variant does not run here, or has no facts
            continue
        if check.ok:
            out.append(key)
    return out


def run_fit(opts: FitOptions) -> tuple[FitCheck, dict[str, Any]]:
    """The fit check for one model on one hardware profile, and what was resolved; when a
    recipe's launch does not fit, other variants that do are offered."""
    from servekit.catalog.documents import read_documents, resolve_catalog_dir

    if opts.engine not in ENGINES:
        raise SelectionError(f"unknown engine {opts.engine!r}", fix=f"use one of: {', '.join(ENGINES)}")
    docs = read_documents(resolve_catalog_dir(opts.catalog))
    profiles = (docs.taxonomy or {}).get("hardware_profiles") or {}
    if opts.hardware not in profiles:
        raise SelectionError(
            f"unknown hardware {opts.hardware!r}", fix=f"use one of: {', '.join(sorted(profiles))}"
        )
    profile = profiles[opts.hardware]
    check, context = _check(docs, profile, opts, opts.variant)
    memory_errors = [f for f in check.findings if f.code.startswith("fit-") and f.severity == "error"]
    if memory_errors and context["recipe"] == opts.model:
        others = _variants_that_fit(docs, profile, opts, context["variant"] or "default")
        if others:
            note = Finding("note", "fit-other-variant",
                           f"variant(s) that fit {opts.hardware} as planned: {', '.join(others)}",
                           f"--variant {others[0]}")
            check = replace(check, findings=check.findings + (note,))
    return check, context


def _report_lines(r: FitReport) -> list[str]:
    state = f", {r.linear_state_bytes_per_seq:,} B/sequence of constant state" if r.linear_state_bytes_per_seq else ""
    graphs = f" + CUDA graphs {r.cudagraph_gib:.2f}" if r.cudagraph_gib else ""
    return [
        f"  engine {r.engine}, TP {r.tp} x PP {r.pp}, max-model-len {r.max_model_len:,}, "
        f"kv-cache-dtype {r.kv_cache_dtype}",
        f"  per rank: budget {r.budget_gib:.2f} GiB = weights {r.weights_gib_per_rank:.2f} + activation "
        f"{r.activation_gib:.2f} + runtime {r.runtime_gib:.2f}{graphs} + KV {r.available_kv_gib:.2f} GiB",
        f"  KV: {r.kv_bytes_per_token:,.0f} B/token/rank (attention layers){state}, block {r.block_size} tokens",
        f"  pool {r.kv_tokens:,} tokens; {r.max_concurrency:.2f}x requests of {r.max_model_len:,}; "
        f"longest context that fits {r.longest_context:,}",
    ]


def render_text(check: FitCheck, context: dict[str, Any]) -> str:
    variant = f" (variant {context['variant']})" if context.get("variant") else ""
    lines = [f"{context['model']} on {context['hardware']}{variant}"]
    if check.report is not None:
        lines += _report_lines(check.report)
    for f in check.findings:
        lines.append(f"  {f.severity}: {f.message}" + (f" (fix: {f.fix})" if f.fix else ""))
    lines.append("  fits: yes" if check.ok else "  fits: NO")
    return "\n".join(lines)


def predict_points(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """One output object per kv-points input line, in order; a bad line yields ``{"error": ...}``."""
    from servekit.fit.points import predict_point

    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            point = json.loads(line)
            if not isinstance(point, dict):
                raise ServekitError("expected a JSON object")
            yield predict_point(point)
        except json.JSONDecodeError as exc:
            yield {"error": f"line {number}: not JSON ({exc.msg})"}
        except KeyError as exc:
            yield {"error": f"line {number}: config_facts lacks {exc.args[0]!r}"}
        except (ServekitError, TypeError, ValueError) as exc:
            yield {"error": f"line {number}: {exc}"}
