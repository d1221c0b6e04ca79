"""Batch planning: one JSON request per line in, one rendering object per line out, as each line
is read and planned (memory is the catalog's, not the batch's); a line that trips over a misshapen
catalog document gets the validator's finding, and the catalog is validated at most once a run."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from servekit.app.plan import plan_from_selection
from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.faults import CatalogCauses, catalog_faults
from servekit.errors import ServekitError
from servekit.jsonl import numbered_objects
from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import selection_from_request


def plan_request(docs: CatalogDocuments, request: Any, causes: CatalogCauses | None = None) -> dict[str, Any]:
    """The rendering object for one request (a complete selection, engine-neutral, without
    checks), or ``{"error": message}``. ``causes``: the run's catalog validation, if any yet."""
    if not isinstance(request, dict):
        return {"error": "each line must be a JSON object"}
    try:
        with catalog_faults(docs.root, docs.sources.get(f"models/{request.get('recipe')}"), causes=causes):
            selection = selection_from_request(docs, request)
            result = plan_from_selection(docs, selection, lean=True, translate=False, checks=False)
            return render_plan(result.plan)
    except ServekitError as exc:
        return {"error": str(exc)}


def plan_lines(docs: CatalogDocuments, lines: Iterable[str | bytes]) -> Iterator[dict[str, Any]]:
    """Plan every non-empty line, in order; a bad line yields ``{"error": "line N: ..."}``."""
    causes = CatalogCauses()
    for number, request, error in numbered_objects(lines):
        if request is None:
            yield {"error": error}
            continue
        result = plan_request(docs, request, causes)
        yield {"error": f"line {number}: {result['error']}"} if "error" in result else result
