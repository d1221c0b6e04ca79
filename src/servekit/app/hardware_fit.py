"""Does a plan fit on each hardware profile: the fit verdict ``servekit plan`` reaches there.

For each hardware id, the request at that hardware goes through the selection ``servekit plan``
makes (``servekit.app.plan.select``: the default rules, then the smallest layout that fits when
the request names none) and the fit checks of its plan (``servekit.app.layout.fit_checker``,
the person's overrides applied). The builder page marks its hardware choices with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from servekit.app.layout import fit_checker, fit_verdict, verdicts
from servekit.app.plan import select
from servekit.app.request import PlanRequest
from servekit.catalog.documents import CatalogDocuments
from servekit.errors import ServekitError


def fits_on(docs: CatalogDocuments, request: PlanRequest, recipe_id: str, variant: str | None,
            hardware: Iterable[str]) -> dict[str, bool | None]:
    """Hardware id -> True (fits), False (does not fit) or None (no model facts, or the request
    has no plan there)."""
    check = fit_checker(docs, overrides=request.overrides)
    out: dict[str, bool | None] = {}
    for hw in hardware:
        try:
            selection = select(docs, replace(request, hardware=hw), recipe_id, variant, check=check)
            out[hw] = fit_verdict(verdicts(check(selection)))
        except ServekitError:
            out[hw] = None
    return out
