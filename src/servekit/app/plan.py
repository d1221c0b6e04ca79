"""The planning pipeline: resolve -> synthesize -> translate -> check, once for every surface.

``plan(request)`` answers ``servekit plan`` and the Python API; the steps it is made of
(``synthesized``, ``plan_from_selection``) serve the batch path, the JSON API, fit and
warm-cache, so each rule is applied in one place whatever asked for the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from servekit.app.checks import checks_pass, plan_checks
from servekit.app.engine_choice import checked_engine, engine_on, translates
from servekit.app.layout import Checker, Reselect, fit_checker, fitted_layout, name_fitting_layout
from servekit.app.local_hardware import local_note, with_local
from servekit.app.model_ref import ModelRef, hub_url_parts, model_ref
from servekit.app.request import PlanRequest, find_model, load_documents
from servekit.app.run_site import RunSite
from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.faults import catalog_faults
from servekit.catalog.ids import UnknownIdError
from servekit.errors import SelectionError
from servekit.facts.missing import FactsNotFoundError
from servekit.hardware import LOCAL, profile_of
from servekit.records import record
from servekit.synthesis.apply_overrides import apply_overrides
from servekit.synthesis.overrides import Overrides
from servekit.synthesis.plan import Plan, Selection
from servekit.synthesis.resolve import resolve_selection
from servekit.synthesis.synthesize import synthesize


@record
class PlanResult:
    """One plan and what was found about it."""

    selection: Selection
    plan: Plan
    commands: tuple[Any, ...] | None = None
    """The processes in the engine's form (``ProcessCommand``), when the engine is not the native one."""
    checks: dict[str, Any] | None = None
    """``{"fit": [...]}`` or ``{"fit": None, "note": ...}``; None when checks were not asked for."""
    from_recipe: bool = True
    """False for a plan built from a model's config alone (no recipe names the model)."""

    @property
    def engine(self) -> str:
        return self.selection.engine

    @property
    def valid(self) -> bool:
        """Every engine command translated without an error finding."""
        return self.commands is None or all(pc.command.valid for pc in self.commands)

    @property
    def can_start(self) -> bool:
        """No fit check says a process would fail to start."""
        return self.checks is None or checks_pass(self.checks)


def resolve(docs: CatalogDocuments, request: PlanRequest, recipe_id: str, variant: str | None) -> Selection:
    """The request's choices with every default rule applied; the engine follows the hardware
    where vLLM runs there as a plugin or fork (``engine_choice.engine_on``)."""
    selection = resolve_selection(
        docs, recipe_id, hardware=request.hardware, variant=variant, strategy=request.strategy,
        node_count=request.nodes, enable=request.features, disable=request.no_features,
        modes=dict(request.modes), kv_offload=request.kv_offload, engine=checked_engine(request.engine),
        **({"omni_task": request.task} if request.task else {}),
    )
    raw = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware)
    engine = engine_on(selection.engine, profile_of(raw, selection.hardware).platform if raw else None)
    return selection if engine == selection.engine else replace(selection, engine=engine)


def reselector(docs: CatalogDocuments, request: PlanRequest, recipe_id: str, variant: str | None) -> Reselect:
    """The request's selection at another (strategy, node count), every other choice kept."""
    return lambda strategy, nodes: resolve(docs, replace(request, strategy=strategy, nodes=nodes), recipe_id, variant)


def select(docs: CatalogDocuments, request: PlanRequest, recipe_id: str, variant: str | None, *,
           check: Checker | None = None) -> Selection:
    """The request's selection: the default rules, then, when the request names no layout and
    the default one does not fit, the smallest layout that does (``servekit.app.layout``;
    ``check`` judges a layout, by default the plan's own fit checks with the request's overrides)."""
    selection = resolve(docs, request, recipe_id, variant)
    if request.names_layout:
        return selection
    return fitted_layout(docs, selection, reselector(docs, request, recipe_id, variant),
                         check or fit_checker(docs, overrides=request.overrides))


def synthesized(docs: CatalogDocuments, selection: Selection, *, lean: bool = False) -> Plan:
    """The engine-neutral plan of a complete selection (its engine checked against the registry).

    ``lean`` leaves out install steps and the minimum version (bulk rendering)."""
    checked_engine(selection.engine)
    return synthesize(docs, selection, lean=lean)


def translated(docs: CatalogDocuments, plan: Plan, options: Mapping[str, Any] | None = None,
               engine_version: str | None = None) -> tuple[Any, ...] | None:
    """The plan's processes in its engine's form (findings included); None for the native engine."""
    engine = plan.selection.engine
    if not translates(engine):
        return None
    from servekit.engines.plan_translate import translate_plan

    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(plan.selection.hardware)
    return tuple(translate_plan(plan, engine, hardware=profile, options=dict(options or {}),
                                engine_version=engine_version))


def plan_from_selection(
    docs: CatalogDocuments,
    selection: Selection,
    *,
    lean: bool = False,
    translate: bool = True,
    checks: bool = True,
    engine_options: Mapping[str, Any] | None = None,
    overrides: Overrides = Overrides(),
    site: RunSite = RunSite(),
) -> PlanResult:
    """Synthesize, apply the person's ``overrides``, translate (``translate``) and check
    (``checks``, in the form ``site`` names) one complete selection."""
    plan = apply_overrides(synthesized(docs, selection, lean=lean), overrides)
    version = overrides.vllm_version
    commands = translated(docs, plan, engine_options, version) if translate else None
    found = plan_checks(docs, plan, flags=not lean, vllm_version=version, site=site) if checks else None
    return PlanResult(selection, plan, commands, found)


def plan(request: PlanRequest, *, translate: bool = True) -> PlanResult:
    """The whole pipeline for one request; a crash on a misshapen catalog document is reported
    as that document's first validation error. A MODEL no recipe names (a checkpoint directory,
    a Hugging Face id or URL) gets a plan built from its config (``servekit.app.any_model``).
    ``translate=False`` leaves the plan in its engine-neutral form (``commands`` is None)."""
    checked_engine(request.engine)
    request, ref = _recipe_request(request)
    found = None if ref is not None and ref.revision else _find_recipe(request)
    if found is None:
        return _plan_without_recipe(request, ref, translate)
    docs, recipe_id, variant = found
    docs = with_local(docs, request.hardware)  # hardware ``local``: this machine, as for a model without a recipe
    with catalog_faults(docs.root, docs.sources.get(f"models/{recipe_id}")):
        selection = select(docs, request, recipe_id, variant)
        if request.hardware == LOCAL:
            selection = replace(selection, notes=(local_note(), *selection.notes))
        result = plan_from_selection(docs, selection, checks=request.checks, overrides=request.overrides,
                                     translate=translate,
                                     engine_options=request.engine_options.as_options(), site=request.site)
        if request.names_layout and result.checks:  # judged without the person's --tp and --pp
            name_fitting_layout(docs, result.selection, result.checks, reselector(docs, request, recipe_id, variant),
                                fit_checker(docs, overrides=replace(request.overrides, tp=None, pp=None)))
        return result


def _recipe_request(request: PlanRequest) -> tuple[PlanRequest, ModelRef | None]:
    """A Hugging Face URL names its repo id, which a recipe may serve."""
    parts = hub_url_parts(request.model)
    if parts is None:
        return request, None
    return replace(request, model=parts[0]), model_ref(request.model)


def _find_recipe(request: PlanRequest) -> tuple[CatalogDocuments, str, str | None] | None:
    """(documents, recipe id, variant), or None when no recipe or variant names the model."""
    try:
        return find_model(request)
    except UnknownIdError:
        return None


def _not_a_recipe_nor_cached(request: PlanRequest, exc: FactsNotFoundError) -> SelectionError:
    """A hub id no recipe names and whose facts are not cached: both halves of the answer, the
    way to get the model's facts before the closest recipe ids."""
    try:
        find_model(replace(request, variant=None))
    except UnknownIdError as unknown:
        return unknown.with_hint(f"as a Hugging Face model: {exc.message}", fix=exc.fix)
    return SelectionError(exc.message, fix=exc.fix)


def _plan_without_recipe(request: PlanRequest, ref: ModelRef | None, translate: bool = True) -> PlanResult:
    from servekit.app.any_model import plan_any_model

    docs = request.documents or load_documents(request.catalog, "")
    if ref is None:
        try:
            ref = model_ref(request.model)
        except SelectionError:
            find_model(request)  # not a model either: the catalog's "unknown recipe" error says which exist
            raise
    try:
        generic, checks = plan_any_model(docs, request, ref, engine=checked_engine(request.engine))
    except FactsNotFoundError as exc:
        raise _not_a_recipe_nor_cached(request, exc) from None
    version = request.overrides.vllm_version
    rest = replace(request.overrides, tp=None, pp=None)  # the layout was built with --tp and --pp
    if rest:  # the person's other values: checked as they will run
        generic = apply_overrides(generic, rest)
        checks = {**plan_checks(docs, generic, flags=True, vllm_version=version, site=request.site),
                  "facts": checks.get("facts")}
    commands = translated(docs, generic, request.engine_options.as_options(), version) if translate else None
    return PlanResult(generic.selection, generic, commands, checks if request.checks else None, from_recipe=False)
