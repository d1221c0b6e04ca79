"""Batch planning: one JSON request per line in, one rendering object per line out."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from servekit.catalog.faults import catalog_faults
from servekit.errors import ServekitError
from servekit.jsonl import numbered_objects
from servekit.synthesis.resolve import resolve_selection, selection_from_request  # noqa: F401 - re-exported


def plan_request(docs, request: Any) -> dict[str, Any]:
    """The rendering object for one request, or ``{"error": message}``."""
    from servekit.synthesis.render import render_plan
    from servekit.synthesis.synthesize import synthesize

    if not isinstance(request, dict):
        return {"error": "each line must be a JSON object"}
    try:
        with catalog_faults(docs.root, docs.sources.get(f"models/{request.get('recipe')}")):
            return render_plan(synthesize(docs, selection_from_request(docs, request), lean=True))
    except ServekitError as exc:
        return {"error": str(exc)}


def plan_lines(docs, lines: Iterable[str | bytes]) -> Iterator[dict[str, Any]]:
    """Plan every non-empty line, in order; a bad line yields ``{"error": "line N: ..."}``."""
    for number, request, error in numbered_objects(lines):
        if request is None:
            yield {"error": error}
            continue
        result = plan_request(docs, request)
        yield {"error": f"line {number}: {result['error']}"} if "error" in result else result
