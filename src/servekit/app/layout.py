"""The parallel layout a plan runs at: the recipe's default, unless it does not fit.

When the person named no layout (no ``--strategy``, ``--nodes`` or ``--tp``) and the layout the
recipe's default rules pick does not fit the hardware (servekit.fit's verdict, the check every
plan gets through ``servekit.app.checks.process_checks``), the plan takes the smallest layout of
the recipe's offered strategies on that hardware that does (``servekit.synthesis.layouts``:
fewest devices first), records in its provenance and notes that fit chose it, and keeps every
other choice. A layout the person named is never changed; when it does not fit, the check gets a
``fit-layout`` finding naming the smallest layout that would.

The reference catalog's API tree and batch lines name their layout, so they render as the
reference does; only plans made from a person's choices (``servekit plan``, ``fit``,
``warm-cache``, ``up``, the builder page) are fitted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from servekit.app.checks import known_facts, process_checks
from servekit.catalog.domain import recipe_of, strategies_of
from servekit.errors import ServekitError
from servekit.findings import Finding
from servekit.synthesis.apply_overrides import apply_overrides
from servekit.synthesis.overrides import Overrides
from servekit.synthesis.plan import Selection
from servekit.synthesis.resolve import selection_from_request
from servekit.synthesis.synthesize import synthesize

if TYPE_CHECKING:
    from servekit.synthesis.layouts import Layout

SEARCHED_FAILURES = frozenset({"memory", "divisibility", "devices"})
"""What another layout can cure; a plan failing on anything else keeps its layout."""

Checker = Callable[[Selection], "list[Any] | None"]
"""A selection -> the ``FitCheck`` of each head process of its plan (None: no model facts)."""
Reselect = Callable[[str, int], Selection]
"""(strategy, node count) -> the person's selection with that layout, every other choice kept."""


def fit_checker(docs: Any, *, overrides: Overrides | None = None, extra_argv: Sequence[str] = (),
                engine: str | None = None, cpu_kvcache_space_gib: float | None = None) -> Checker:
    """The fit checks of a selection's plan as the person will run it (``overrides`` applied,
    ``extra_argv`` added); each distinct launch (hardware, variant, node count, argv and env)
    is checked once."""
    seen: dict[Any, list[Any] | None] = {}
    facts_of: dict[str, Any] = {}
    version = overrides.vllm_version if overrides else None

    def check(selection: Selection) -> list[Any] | None:
        plan = apply_overrides(synthesize(docs, selection, lean=True), overrides or Overrides())
        env = tuple((k, str(v)) for k, v in plan.env_map().items())
        key = (selection.hardware, selection.variant, selection.node_count, env,
               *((p.role, tuple(map(str, p.argv())), tuple((k, str(v)) for k, v in p.env_map().items()))
                 for p in plan.processes))
        if key not in seen:
            if plan.model_id not in facts_of:
                facts_of[plan.model_id] = known_facts(plan.model_id)
            facts = facts_of[plan.model_id]
            seen[key] = None if facts is None else [c for _, c in process_checks(
                docs, plan, facts, extra_argv=extra_argv, engine=engine,
                cpu_kvcache_space_gib=cpu_kvcache_space_gib, vllm_version=version)]
        return seen[key]

    return check


Verdicts = Sequence[tuple[Any, Sequence[str]]]
"""(fits, failed kinds) of each head process: ``FitCheck.fits``/``.failed``, or their JSON form."""


def verdicts(checks: Sequence[Any] | None) -> Verdicts | None:
    """The (fits, failed) pairs of ``FitCheck`` objects or of their dicts; None stays None."""
    if checks is None:
        return None
    return [(c["fits"], tuple(c["failed"])) if isinstance(c, dict) else (c.fits, c.failed) for c in checks]


def fit_verdict(pairs: Verdicts | None) -> bool | None:
    """True when every head process fits, False when one does not, None when unknown (no facts)."""
    if pairs is None:
        return None
    if any(fits is False for fits, _ in pairs):
        return False
    return True if all(fits for fits, _ in pairs) else None


def _curable(pairs: Verdicts | None) -> bool:
    failed = {kind for _, kinds in pairs or () for kind in kinds}
    return fit_verdict(pairs) is False and failed <= SEARCHED_FAILURES


def smallest_fitting(docs: Any, selection: Selection, reselect: Reselect,
                     check: Checker) -> tuple[Layout, Selection] | None:
    """The first layout, fewest devices first, whose plan fits (with its selection); None when none does."""
    from servekit.synthesis.layouts import parallel_layouts  # only a plan that does not fit searches

    recipe = recipe_of(docs, selection.recipe_id)
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(selection.hardware) or {}
    for layout in parallel_layouts(recipe, profile, selection.hardware, strategies_of(docs), selection.strategy):
        try:
            candidate = replace(reselect(layout.strategy, layout.nodes), tp=layout.tp, layout_by_fit=True)
            fits = fit_verdict(verdicts(check(candidate)))
        except ServekitError:  # the person's other choices do not go with this layout
            continue
        if fits:
            return layout, candidate
    return None


def fitted_layout(docs: Any, selection: Selection, reselect: Reselect, check: Checker) -> Selection:
    """``selection``, or the smallest layout that fits when its own does not (said in its notes)."""
    checks = check(selection)
    if not _curable(verdicts(checks)):
        return selection
    found = smallest_fitting(docs, selection, reselect, check)
    if found is None:
        return selection
    layout, chosen = found
    verdict = next(c.verdict for c in checks or () if c.fits is False)
    note = (f"layout chosen by fit: the recipe's default layout ({selection.strategy}) on {selection.hardware}: "
            f"{verdict}; {layout.describe()} is the smallest of the recipe's layouts that fits")
    return replace(chosen, notes=(*chosen.notes, note))


def layout_finding(docs: Any, selection: Selection, named: Verdicts | None, reselect: Reselect,
                   check: Checker) -> Finding | None:
    """For a layout the person named whose checks (``named``) fail where another layout could
    help: a note naming the smallest layout that fits (``check`` judges the candidates)."""
    if not _curable(named):
        return None
    found = smallest_fitting(docs, selection, reselect, check)
    if found is None:
        return Finding("note", "fit-layout", f"no layout of the recipe's strategies fits {selection.hardware}")
    layout = found[0]
    return Finding("note", "fit-layout", f"{layout.describe()} fits {selection.hardware}", layout.options())


def complete_reselector(docs: Any, selection: Selection) -> Reselect:
    """For a complete selection (a batch line, an API tree rendering): the same line at another
    layout, checked as a batch line is."""
    line = {"recipe": selection.recipe_id, "hardware": selection.hardware, "variant": selection.variant,
            "features": list(selection.features), "modes": dict(selection.modes),
            "kv_offload": selection.kv_offload, "engine": selection.engine}
    return lambda strategy, nodes: selection_from_request(docs, {**line, "strategy": strategy, "node_count": nodes})


def name_fitting_layout(docs: Any, selection: Selection, checks: dict[str, Any], reselect: Reselect,
                        check: Checker) -> None:
    """Add to the first failing fit check in ``checks`` (a plan's checks, as JSON) the
    ``fit-layout`` finding naming the smallest layout that fits, when another layout could help."""
    fit = checks.get("fit")
    finding = layout_finding(docs, selection, verdicts(fit), reselect, check) if fit else None
    if finding is not None:
        failing = next(c for c in fit if c.get("fits") is False)
        failing["findings"] = [*failing.get("findings", []), finding.to_dict()]
