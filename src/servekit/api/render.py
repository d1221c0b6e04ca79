"""Render one API command object through servekit's synthesis.

The builder asks for fully specified commands (variant, strategy, hardware, node count,
enabled features, PD pool sizes, KV-store deployment); modes are left to the default rules.
A combination the synthesis refuses is skipped and recorded, as the public site's builder
skips it, so one unsupported corner never sinks the whole tree.
"""

from __future__ import annotations

from typing import Any

from servekit.api.matrix import RenderRequest
from servekit.catalog.documents import CatalogDocuments
from servekit.differences import explaining
from servekit.errors import ServekitError
from servekit.synthesis.plan import Selection
from servekit.synthesis.render import render_plan, servekit_extras
from servekit.synthesis.resolve import selection_from_request
from servekit.synthesis.synthesize import synthesize


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
        "pd_nodes": request.pd_nodes,
    }


def selection_for(docs: CatalogDocuments, recipe_id: str, request: RenderRequest) -> Selection:
    return selection_from_request(docs, batch_request(recipe_id, request))


class SynthesisRenderer:
    """A ``Renderer`` for one recipe of one catalog."""

    def __init__(self, docs: CatalogDocuments, recipe_id: str, skipped: list[str]) -> None:
        self._docs = docs
        self._recipe_id = recipe_id
        self._skipped = skipped

    def extras(self, request: RenderRequest) -> dict[str, Any] | None:
        """servekit's own facts about one rendering: provenance, install steps, minimum version,
        notes, and which intentional differences from the reference apply to it."""
        try:
            selection = selection_for(self._docs, self._recipe_id, request)
            extras = servekit_extras(synthesize(self._docs, selection))
        except ServekitError:
            return None
        extras["differences_from_reference"] = [d.id for d in explaining(self._docs, selection)]
        return extras

    def __call__(self, request: RenderRequest) -> dict[str, Any] | None:
        try:
            selection = selection_for(self._docs, self._recipe_id, request)
            return render_plan(synthesize(self._docs, selection))
        except ServekitError as exc:
            self._skipped.append(
                f"{self._recipe_id} / {request.variant} / {request.hardware} / {request.strategy}: {exc}"
            )
            return None
