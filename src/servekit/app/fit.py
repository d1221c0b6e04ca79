"""``servekit fit`` as a function of plain values: resolve the model and hardware, plan, check.

For a recipe or a checkpoint id, the selection checked is the one ``servekit plan`` makes (same
variant, same argv, same checks, through ``servekit.app.checks.process_checks``); for a model
without a recipe (a directory, a Hugging Face id or URL) it is the plan ``servekit plan`` builds
from the model's config, with the same facts and weight estimate. So both reach the same
verdict. An explicit ``--tp`` on a recipe describes the user's own launch instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from servekit.app.any_model import refuse_recipe_options
from servekit.app.checks import known_facts, process_checks
from servekit.app.generic_nodes import Topology
from servekit.app.generic_plan import generic_plan
from servekit.app.model_facts import generic_model
from servekit.app.model_ref import ModelRef, model_ref
from servekit.app.layout import Checker, fit_checker, layout_finding, verdicts
from servekit.app.plan import plan_from_selection, reselector, resolve, select
from servekit.app.local_hardware import with_local
from servekit.app.request import PlanRequest, load_documents
from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.ids import recipe_for_model
from servekit.engines.registry import engine_for_platform
from servekit.errors import SelectionError, ServekitError
from servekit.facts.resolve import resolve_model
from servekit.findings import Finding
from servekit.fit.api import FitCheck, check_plan_fit
from servekit.fit.planner import engine_choices
from servekit.fit.points import predict_point
from servekit.hardware import build_profile
from servekit.jsonl import numbered_objects
from servekit.synthesis.overrides import Overrides
from servekit.synthesis.resolve import require_variant_runs

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


def _plan_request(docs: CatalogDocuments, recipe_id: str, variant: str | None, opts: FitOptions) -> PlanRequest:
    return PlanRequest(recipe_id, hardware=opts.hardware, variant=variant, strategy=opts.strategy,
                       nodes=opts.nodes if opts.nodes > 1 else None, checks=False, documents=docs)


def _checker(docs: CatalogDocuments, opts: FitOptions) -> Checker:
    """Fit checks of a plan with the user's launch options added, as fit reports them."""
    return fit_checker(docs, extra_argv=_user_argv(replace(opts, tp=None)), engine=_engine(opts),
                       cpu_kvcache_space_gib=opts.cpu_kvcache_space_gib)


def _launch_engine(opts: FitOptions, profile: dict[str, Any]) -> str:
    """The engine of a launch fit prices without a plan: the one named, else the one a plain vLLM
    launch runs as on the hardware's platform (vllm-qaic on Cloud AI 100, vllm-ascend on Ascend)."""
    if opts.engine != "vllm":
        return opts.engine
    return engine_for_platform(build_profile(opts.hardware, profile).platform).id


def _engine(opts: FitOptions) -> str | None:
    return opts.engine if opts.engine != "vllm" else None


def _layout_note(docs: CatalogDocuments, opts: FitOptions, variant: str | None, check: FitCheck) -> Finding | None:
    """For a layout the user named (``--strategy``, ``--nodes``, ``--tp``) that does not fit:
    the smallest layout of the recipe that would, or None."""
    request = _plan_request(docs, opts.model, variant, opts)
    try:
        selection = resolve(docs, request, opts.model, variant)
    except ServekitError:
        return None
    return layout_finding(docs, selection, verdicts([check]), reselector(docs, request, opts.model, variant),
                          _checker(docs, opts))


def _user_argv(opts: FitOptions) -> list[str]:
    argv = list(opts.extra_args)
    pairs = [
        ("--pipeline-parallel-size", opts.pp if opts.tp is None else None),
        ("--max-model-len", opts.max_model_len),
        ("--kv-cache-dtype", opts.kv_cache_dtype),
        ("--gpu-memory-utilization", opts.gpu_memory_utilization),
        ("--max-num-seqs", opts.max_num_seqs),
    ]
    for name, value in pairs:
        if value is not None:
            argv += [name, str(value)]
    return argv


def _context(opts: FitOptions, facts, recipe: str | None, variant: str | None, argv: list[str]) -> dict:
    return {"model": opts.model, "checkpoint": facts.model_id, "facts_source": facts.source, "recipe": recipe,
            "variant": variant, "hardware": opts.hardware, "argv": argv}


def _layout_overrides(opts: FitOptions) -> Overrides:
    """``--tp`` (with ``--pp``) as ``servekit plan`` takes them over a recipe's layout."""
    if opts.tp is None:
        return Overrides()
    return Overrides(tp=opts.tp, pp=opts.pp if opts.pp and opts.pp > 1 else None)


def _planned_check(docs: CatalogDocuments, opts: FitOptions, recipe_id: str,
                   variant: str | None) -> tuple[FitCheck, dict]:
    """The check ``servekit plan`` runs for the same selection (same variant, engine, argv and
    checks; a ``--tp`` the user names laid over it as plan lays it), with the user's memory
    options added to the launch."""
    overrides = _layout_overrides(opts)
    request = replace(_plan_request(docs, recipe_id, variant, opts), overrides=overrides)
    selection = select(docs, request, recipe_id, variant, check=_checker(docs, opts))
    plan = plan_from_selection(docs, selection, translate=False, checks=False, overrides=overrides).plan
    chosen = plan.selection.variant
    facts = known_facts(plan.model_id) or resolve_model(recipe_id, variant=chosen, recipes=docs.recipes).facts
    role, check = process_checks(docs, plan, facts, extra_argv=_user_argv(opts), engine=_engine(opts),
                                 cpu_kvcache_space_gib=opts.cpu_kvcache_space_gib)[0]
    head = next(p for p in plan.processes if p.role == role and not p.rank)
    return check, _context(opts, facts, recipe_id, chosen, [str(t) for t in head.argv()] + _user_argv(opts))


def _plannable(model: str) -> ModelRef | None:
    """The model ``servekit plan`` would plan without a recipe (a directory, its config.json, a
    Hugging Face id or URL); None for what only fit reads (a model facts file)."""
    try:
        return model_ref(model)
    except SelectionError:
        return None


def _generic_check(docs: CatalogDocuments, profile: dict[str, Any], opts: FitOptions,
                   ref: ModelRef) -> tuple[FitCheck, dict]:
    """The check of the plan ``servekit plan`` makes for a model without a recipe (same facts,
    weights estimated the same way, same layout), with the user's launch options added."""
    request = PlanRequest(opts.model, hardware=opts.hardware, variant=opts.variant, strategy=opts.strategy,
                          nodes=opts.nodes if opts.nodes > 1 else None, tp=opts.tp, pp=opts.pp, documents=docs)
    refuse_recipe_options(request, ref)
    model = generic_model(ref)
    topology = Topology(opts.nodes, opts.tp, opts.pp)  # laid out with --tp and --pp, as plan lays it out
    plan, _ = generic_plan(model, profile, opts.hardware, topology=topology)
    extra = _user_argv(replace(opts, tp=None, pp=None))
    role, check = process_checks(docs, plan, model.facts, extra_argv=extra, engine=_engine(opts),
                                 cpu_kvcache_space_gib=opts.cpu_kvcache_space_gib)[0]
    head = next(p for p in plan.processes if p.role == role and not p.rank)
    return check, _context(opts, model.facts, None, None, [str(t) for t in head.argv()] + extra)


def _check(docs: CatalogDocuments, profile: dict[str, Any], opts: FitOptions,
           variant: str | None) -> tuple[FitCheck, dict]:
    recipe_id = opts.model if opts.model in docs.recipes else None
    if recipe_id and opts.tp is None:
        return _planned_check(docs, opts, recipe_id, variant)
    if recipe_id:
        if variant is not None:  # a variant the user names must run here (the plan picks one that does)
            require_variant_runs(docs, recipe_id, variant, opts.hardware)
        try:
            return _planned_check(docs, opts, recipe_id, variant)  # --tp laid over the recipe's plan
        except SelectionError:  # a layout the recipe does not offer here: the user's own launch below
            pass
    ref = None if recipe_id else _plannable(opts.model)
    if ref is not None:
        return _generic_check(docs, profile, opts, ref)
    if recipe_id and variant is None:
        try:
            variant = resolve(docs, _plan_request(docs, recipe_id, None, opts), recipe_id, None).variant
        except ServekitError:  # no plan for this hardware: the user's own launch, default variant
            variant = None
    resolved = resolve_model(opts.model, variant=variant, recipes=docs.recipes)
    if resolved.recipe_id:  # a layout the user names still runs the recipe's variant: it must run here
        require_variant_runs(docs, resolved.recipe_id, resolved.variant, opts.hardware)
    argv: list[str] = []
    if resolved.recipe_id:
        # an explicit --tp describes the user's own launch; keep the recipe's memory options
        argv += _recipe_argv(docs.recipes[resolved.recipe_id], resolved.variant or "default", opts.hardware)
    argv += _user_argv(opts)
    check = check_plan_fit(
        resolved.facts, profile, hardware_name=opts.hardware, argv=argv, tp=opts.tp, pp=opts.pp,
        engine=_launch_engine(opts, profile), precision=(resolved.variant_doc or {}).get("precision"),
        node_count=opts.nodes,
        cpu_kvcache_space_gib=opts.cpu_kvcache_space_gib,
    )
    return check, _context(opts, resolved.facts, resolved.recipe_id, resolved.variant, argv)


def variants_that_fit(docs: CatalogDocuments, profile: dict[str, Any], opts: FitOptions, current: str) -> list[str]:
    """Other variants of the recipe whose planned launch fits this hardware."""
    out = []
    for key in (docs.recipes[opts.model].get("variants") or {}):
        if key == current:
            continue
        try:
            check, _ = _check(docs, profile, opts, key)
        except ServekitError:  # the variant does not run here, or has no facts
            continue
        if check.fits:
            out.append(key)
    return out


def _hardware_profile(docs: CatalogDocuments, hardware: str) -> dict[str, Any]:
    profiles = (docs.taxonomy or {}).get("hardware_profiles") or {}
    if hardware not in profiles:
        raise SelectionError(f"unknown hardware {hardware!r}", fix=f"use one of: {', '.join(sorted(profiles))}")
    return profiles[hardware]


def run_fit(opts: FitOptions) -> tuple[FitCheck, dict[str, Any]]:
    """The fit check for one model on one hardware profile, and what was resolved; when a
    recipe's launch does not fit, the smallest layout that would (for a layout the user named)
    and other variants that do are offered."""
    engines = engine_choices()
    if opts.engine not in engines:
        raise SelectionError(f"unknown engine {opts.engine!r}", fix=f"use one of: {', '.join(engines)}")
    docs = with_local(load_documents(opts.catalog), opts.hardware)  # ``local``: this machine, as `plan` reads it
    profile = _hardware_profile(docs, opts.hardware)
    found = recipe_for_model(docs.recipes, opts.model, opts.variant)
    if found is not None:  # the catalog's spelling of a recipe or checkpoint id
        opts = replace(opts, model=found[0], variant=found[1])
    check, context = _check(docs, profile, opts, opts.variant)
    named = opts.tp is not None or opts.strategy is not None or opts.nodes > 1
    if named and check.fits is False and context["recipe"] == opts.model:
        layout = _layout_note(docs, opts, context["variant"], check)
        check = replace(check, findings=check.findings + (layout,)) if layout else check
    if "memory" in check.failed and context["recipe"] == opts.model:
        others = variants_that_fit(docs, profile, opts, context["variant"] or "default")
        if others:
            note = Finding("note", "fit-other-variant",
                           f"variant(s) that fit {opts.hardware} as planned: {', '.join(others)}",
                           f"--variant {others[0]}")
            check = replace(check, findings=check.findings + (note,))
    return check, context


def predict_points(lines: Iterable[str | bytes], *, strict: bool = False) -> Iterator[dict[str, Any]]:
    """One output object per kv-points input line, in order; a bad line yields ``{"error": ...}``.

    A field the reader cannot read in any structured form is set aside (read as unstated, named with
    the reader's reason in the line's ``set_aside``), so a line that states its device memory still
    gets a figure and says what it rests on; ``strict`` refuses such a line instead."""
    for number, point, error in numbered_objects(lines):
        if point is None:
            yield {"error": error}
            continue
        try:
            yield predict_point(point, set_aside_unreadable=not strict)
        except KeyError as exc:
            yield {"error": f"line {number}: config_facts lacks {exc.args[0]!r}"}
        except (ServekitError, TypeError, ValueError) as exc:
            yield {"error": f"line {number}: {exc}"}
