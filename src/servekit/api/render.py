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
from servekit.errors import ServekitError


class SynthesisRenderer:
    """A ``Renderer`` for one recipe of one catalog."""

    def __init__(self, docs: CatalogDocuments, recipe_id: str, skipped: list[str]) -> None:
        from servekit.synthesis.resolve import selection_from_request
        from servekit.synthesis.render import render_plan
        from servekit.synthesis.synthesize import synthesize

        self._docs = docs
        self._recipe_id = recipe_id
        self._skipped = skipped
        self._select = selection_from_request
        self._synthesize = synthesize
        self._render = render_plan

    def __call__(self, request: RenderRequest) -> dict[str, Any] | None:
        try:
            selection = self._select(
                self._docs,
                {
                    "recipe": self._recipe_id,
                    "hardware": request.hardware,
                    "variant": request.variant,
                    "strategy": request.strategy,
                    "node_count": request.node_count,
                    "features": list(request.features),
                    "kv_offload": request.kv_offload,
                    "pd_nodes": request.pd_nodes,
                },
            )
            return self._render(self._synthesize(self._docs, selection))
        except ServekitError as exc:
            self._skipped.append(
                f"{self._recipe_id} / {request.variant} / {request.hardware} / {request.strategy}: {exc}"
            )
            return None
