"""Render one API command object through servekit's planning pipeline (``servekit.app``).

The builder asks for fully specified commands (variant, strategy, hardware, node count,
enabled features, PD pool sizes, KV-store deployment); modes are left to the default rules.
A combination the synthesis refuses (or fails on) is skipped and recorded, as the public
site's builder skips it, so one unsupported corner never sinks the whole tree; the build
summary and ``servekit.json`` list every skipped rendering with its reason.
"""

from __future__ import annotations

from typing import Any

from servekit.api.matrix import RenderRequest
from servekit.app.checks import has_facts, plan_checks
from servekit.app.layout import Checker, complete_reselector, fit_checker, name_fitting_layout
from servekit.app.plan import synthesized
from servekit.catalog.documents import CatalogDocuments
from servekit.differences import explaining
from servekit.errors import ServekitError
from servekit.synthesis.plan import Selection
from servekit.synthesis.render import render_plan, servekit_extras
from servekit.synthesis.resolve import selection_from_request


def batch_request(recipe_id: str, request: RenderRequest) -> dict[str, Any]:
    """The request in the ``plan --batch`` form (features are the complete enabled set)."""
    return {
        "recipe": recipe_id,
        "hardware": request.hardware,
        "variant": request.variant,
        "strategy": request.strategy,
        "node_count": request.node_count,
        "features": list(request.features),
        "kv_offload": request.kv_offload,
        "pd_nodes": None if request.pd_nodes is None else dict(request.pd_nodes),
    }


def selection_for(docs: CatalogDocuments, recipe_id: str, request: RenderRequest) -> Selection:
    return selection_from_request(docs, batch_request(recipe_id, request))


def with_checks(docs: CatalogDocuments, plan, rendered: dict[str, Any], check: Checker | None = None,
                known: dict[str, bool] | None = None) -> dict[str, Any]:
    """``rendered`` plus servekit's "can it start" checks under the ``servekit`` key, for
    checkpoints whose model facts ship with servekit (others carry no such key). The rendering
    keeps the reference's layout; when it does not fit, its check names the smallest layout
    that does (``fit-layout``; ``check`` judges the candidate layouts, shared by the renderings
    of one recipe so that each launch is checked once). ``known`` remembers, for one build,
    which checkpoints have facts (the facts caches are part of the build's inputs, so they
    do not change under it; looking them up costs file system calls per rendering)."""
    if _has_facts(plan.model_id, known):
        checks = plan_checks(docs, plan)
        selection = plan.selection
        name_fitting_layout(docs, selection, checks, complete_reselector(docs, selection), check or fit_checker(docs))
        rendered["servekit"] = {"checks": checks}
    return rendered


def _has_facts(model_id: str, known: dict[str, bool] | None) -> bool:
    if known is None:
        return has_facts(model_id)
    if model_id not in known:
        known[model_id] = has_facts(model_id)
    return known[model_id]


class SynthesisRenderer:
    """A ``Renderer`` for one recipe of one catalog.

    Each distinct request is synthesized once, lean (no install steps or minimum version,
    which the rendering object does not carry): a repeated one (the same command published
    under two ids) gets a fresh top-level copy of the first result. ``extras`` synthesizes the
    full plan of the few headline commands.
    """

    def __init__(self, docs: CatalogDocuments, recipe_id: str, skipped: list[str],
                 known_facts: dict[str, bool] | None = None) -> None:
        self._docs = docs
        self._known = known_facts if known_facts is not None else {}
        self._recipe_id = recipe_id
        self._skipped = skipped
        self._done: dict[RenderRequest, tuple[Selection, dict[str, Any]] | None] = {}
        self._check = fit_checker(docs)

    def _synthesized(self, request: RenderRequest) -> tuple[Selection, dict[str, Any]] | None:
        if request in self._done:
            return self._done[request]
        try:
            selection = selection_for(self._docs, self._recipe_id, request)
            plan = synthesized(self._docs, selection, lean=True)
            outcome = (selection, with_checks(self._docs, plan, render_plan(plan), self._check, self._known))
        except ServekitError as exc:
            self._skip(request, str(exc))
            outcome = None
        except Exception as exc:  # noqa: BLE001 - one broken combination must not sink the tree
            self._skip(request, f"internal error {type(exc).__name__}: {exc}")
            outcome = None
        self._done[request] = outcome
        return outcome

    def _skip(self, request: RenderRequest, why: str) -> None:
        where = f"{self._recipe_id} / {request.variant} / {request.hardware} / {request.strategy}"
        self._skipped.append(f"{where}: {why}")

    def __call__(self, request: RenderRequest) -> dict[str, Any] | None:
        outcome = self._synthesized(request)
        return None if outcome is None else dict(outcome[1])

    def extras(self, request: RenderRequest) -> dict[str, Any] | None:
        """servekit's own facts about one rendering: provenance, install steps, minimum version,
        notes, and which intentional differences from the reference apply to it."""
        outcome = self._synthesized(request)
        if outcome is None:
            return None
        selection = outcome[0]
        try:  # the full plan: install steps and minimum version are part of the extras
            extras = servekit_extras(synthesized(self._docs, selection))
        except Exception:  # noqa: BLE001 - the rendering exists; its extras are optional
            return None
        extras["differences_from_reference"] = [d.id for d in explaining(self._docs, selection)]
        return extras
