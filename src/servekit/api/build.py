"""Render the static JSON API tree of a catalog.

Layout of the tree (every path relative to ``--out``)::

    models.json                                 index of recipes and promoted variants
    servekit.json                               build facts and differences from the reference
    taxonomy.json, platforms.json               the controlled vocabulary, deploy platforms
    strategies.json, strategies/{s}.json        serving strategies
    kv_store.json, kv_store/{s}.json            KV-store deployments
    quickstart/{hardware}.json                  hardware quickstarts, when the catalog has them
    {hf_id}.json                                one recipe, with its recommended command
    {hf_id}/strategies/{s}.json                 alternatives on the default hardware
    {hf_id}/hw/{hw}.json                        recommended command on one hardware
    {hf_id}/hw/{hw}/strategies/{s}.json         alternatives on a non-default hardware

A promoted variant (``variants.X.model_id`` naming another repository) gets the same files
under its own id. servekit's own additions never change a reference key: they live in
``servekit.json`` (build facts, skipped renderings, the intentional differences from the
reference) and under the ``servekit`` key of each recipe document (provenance of every
argument of its recommended command, install steps, minimum vLLM version, notes, and which
intentional differences apply to that command).

This module renders recipes into an in-memory ``JsonTree``; ``servekit.api.publish`` runs
it in parallel parts and swaps the result into place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from servekit.api import recipe_doc
from servekit.api.matrix import (
    HardwareRendering,
    MatrixContext,
    Renderer,
    RenderRequest,
    hardware_targets,
    is_omni,
    render_hardware,
)
from servekit.api.recipe_doc import public_id
from servekit.api.render import SynthesisRenderer
from servekit.api.static_docs import put_static_documents
from servekit.api.tree import JsonTree
from servekit.catalog.documents import CatalogDocuments
from servekit.records import record

T = TypeVar("T")

IndexRows = tuple[dict[str, Any], list[dict[str, Any]]]
"""A recipe's ``models.json`` row and the rows of its promoted variants."""


@dataclass
class BuildSummary:
    """What one build produced."""

    out_dir: Path | None
    files: int
    bytes: int
    recipes: int
    promoted: int
    seconds: float
    skipped: list[str] = field(default_factory=list)
    """Renderings that could not be synthesized (recipe / variant / hardware / strategy: why)."""
    phases: dict[str, float] = field(default_factory=dict)
    """Wall seconds per phase (read, parts, publish) and each part's wall / CPU seconds."""
    rerendered: int | None = None
    """For an incremental rebuild, how many recipes were re-rendered (None: a full build)."""

    def line(self) -> str:
        text = (
            f"wrote {self.files} files ({self.bytes / 1e6:.1f} MB) for {self.recipes} recipes"
            f" + {self.promoted} promoted variants in {self.seconds:.2f}s"
        )
        if self.out_dir is not None:
            text += f" to {self.out_dir}"
        if self.rerendered is not None:
            text += f"; incremental: re-rendered {self.rerendered} recipes"
        if self.skipped:
            text += f"; {len(self.skipped)} renderings skipped"
        return text


@record
class Published:
    """One published variant: its headline command object and servekit's facts about it."""

    command: dict[str, Any]
    """The default hardware's recommended rendering plus the ``by_hardware`` index."""
    extras: dict[str, Any] | None


class ApiBuilder:
    """Renders recipes of one catalog into a ``JsonTree``."""

    def __init__(
        self,
        docs: CatalogDocuments,
        renderer: Renderer | None = None,
        *,
        keep_requests: bool = False,
        known_ids: set[str] | None = None,
    ) -> None:
        self.docs = docs
        self.ctx = MatrixContext.of(docs)
        self.tree = JsonTree()
        self.known_ids = known_ids if known_ids is not None else {public_id(r) for r in docs.recipes}
        """Every recipe id of the catalog (a part of a build holds only some of the recipes)."""
        self.attempted: dict[str, list[str]] = {}
        """Recipe id -> the repository ids it tried to publish promoted variants under."""
        self._renderer = renderer
        self.skipped: list[str] = []
        self.requests: dict[str, tuple[str, RenderRequest]] | None = {} if keep_requests else None
        """With ``keep_requests``: path of each rendering file -> (recipe id, what it was rendered from)."""
        self._recipe_id = ""
        self.skipped_by: dict[str, list[str]] = {}
        """Recipe id -> the skipped renderings of that recipe."""
        self._known_facts: dict[str, bool] = {}
        """Checkpoint id -> whether model facts ship or are cached for it (this build's)."""

    def _render_with(self, recipe_id: str) -> Renderer:
        if self._renderer is not None:
            return self._renderer
        return SynthesisRenderer(self.docs, recipe_id, self.skipped, self._known_facts)

    def build_recipes(self, recipe_ids: list[str]) -> dict[str, IndexRows]:
        rows: dict[str, IndexRows] = {}
        for rid in recipe_ids:
            before = len(self.skipped)
            rows[rid] = self.build_recipe(rid)
            self.skipped_by[rid] = self.skipped[before:]
        return rows

    def build_recipe(self, recipe_id: str) -> IndexRows:
        """Put one recipe's files (and its promoted variants') into the tree."""
        recipe = self.docs.recipes[recipe_id]
        self._recipe_id = recipe_id
        hf_id = public_id(recipe_id)
        render = self._render_with(recipe_id)
        doc = recipe_doc.public_base(recipe, hf_id)
        headline = self.publish_variant(recipe, "default", hf_id, render)
        if headline is not None:
            doc["recommended_command"] = headline.command
            recipe_doc.set_own_facts(doc, headline.extras)
        promoted: dict[str, tuple[str, Published]] = {}
        for key, variant in (recipe.get("variants") or {}).items():
            target = recipe_doc.promotion_target(variant)
            if target is None or target in self.known_ids:
                continue  # not a separate repository, or a stand-alone recipe of its own wins
            self.attempted.setdefault(recipe_id, []).append(target)
            published = self.publish_variant(recipe, key, target, render)
            if published is not None:
                promoted[key] = (target, published)
        recipe_doc.link_promoted(doc, {key: target for key, (target, _) in promoted.items()})
        doc = recipe_doc.ordered(doc)
        self.tree.put(f"{hf_id}.json", doc)
        promoted_rows = []
        for key, (target, published) in promoted.items():
            twin = recipe_doc.promoted_doc(doc, key, target, published.command)
            recipe_doc.set_own_facts(twin, published.extras)
            self.tree.put(f"{target}.json", twin)
            promoted_rows.append(recipe_doc.index_entry(twin, derived_from=hf_id))
        return recipe_doc.index_entry(doc), promoted_rows

    def publish_variant(
        self, recipe: dict[str, Any], variant_key: str, base: str, render: Renderer
    ) -> Published | None:
        """Put one variant's per-hardware files under ``base``; None when its default
        hardware cannot be rendered (then nothing is published for it)."""
        if variant_key not in (recipe.get("variants") or {}) or is_omni(recipe):
            return None
        self.tree.drop_subtree(base)  # a rebuilt id never keeps files of an earlier rendering
        where = f"{self._recipe_id} / {variant_key}"
        targets = self._guarded(where, hardware_targets, self.ctx, recipe, variant_key)
        if not targets:
            return None
        default_hw = targets[0]
        per_hw: dict[str, HardwareRendering] = {}
        for hw in targets:
            built = self._guarded(f"{where} / {hw}", render_hardware, self.ctx, recipe, variant_key, hw, render)
            if built is not None:
                per_hw[hw] = built
        if default_hw not in per_hw:
            return None
        by_hardware: dict[str, str] = {}
        for hw, built in per_hw.items():
            folder = f"{base}/strategies" if hw == default_hw else f"{base}/hw/{hw}/strategies"
            links: dict[str, str] = {}
            for name, rendered in built.alternatives.items():
                path = f"{folder}/{name}.json"
                self._put_rendering(path, rendered, built.requests[name])
                links[name] = f"/{path}"
            if links:
                built.recommended["alternatives"] = links
            hw_path = f"{base}/hw/{hw}.json"
            self._put_rendering(hw_path, built.recommended, built.requests[None])
            by_hardware[hw] = f"/{hw_path}"
        headline = per_hw[default_hw]
        extras_for = getattr(render, "extras", None)
        return Published(
            command={**headline.recommended, "by_hardware": by_hardware},
            extras=extras_for(headline.requests[None]) if extras_for is not None else None,
        )

    def _guarded(self, where: str, step: Callable[..., T], *args: Any) -> T | None:
        """Run one step of the matrix; a failure skips that part of the tree and is reported,
        as the reference builder skips a combination it cannot render."""
        try:
            return step(*args)
        except Exception as exc:  # noqa: BLE001 - reported in the summary and servekit.json
            self.skipped.append(f"{where}: internal error {type(exc).__name__}: {exc}")
            return None

    def _put_rendering(self, path: str, rendered: dict[str, Any], request: RenderRequest) -> None:
        self.tree.put(path, rendered)
        if self.requests is not None:
            self.requests[path] = (self._recipe_id, request)


def models_index(recipe_ids: list[str], rows: dict[str, IndexRows]) -> list[dict[str, Any]]:
    """Recipes in catalog order, then every promoted variant in the same order."""
    parents = [rows[rid][0] for rid in recipe_ids]
    return parents + [row for rid in recipe_ids for row in rows[rid][1]]


def build_info(rows: dict[str, IndexRows], skipped: list[str]) -> dict[str, Any]:
    """``/servekit.json``: which servekit built the tree and where it knowingly differs."""
    from servekit import __version__
    from servekit.differences import DIFFERENCES

    return {
        "servekit": {
            "version": __version__,
            "recipes": len(rows),
            "promoted_variants": sum(len(r[1]) for r in rows.values()),
            "skipped_renderings": sorted(skipped),
            "differences_from_reference": [
                {"id": d.id, "reason": d.reason, "fields": list(d.fields)} for d in DIFFERENCES
            ],
        }
    }


def put_catalog_documents(
    tree: JsonTree,
    docs: CatalogDocuments,
    rows: dict[str, IndexRows],
    skipped: list[str],
    order: list[str] | None = None,
) -> None:
    """The catalog-wide files; ``order`` is the catalog's recipe order (default: ``docs``')."""
    put_static_documents(tree, docs)
    tree.put("models.json", models_index(order if order is not None else list(docs.recipes), rows))
    tree.put("servekit.json", build_info(rows, skipped))


def build_tree(
    docs: CatalogDocuments, renderer: Renderer | None = None
) -> tuple[JsonTree, BuildSummary]:
    """Render a whole catalog into memory, in this process (no disk writes)."""
    tree, summary, _ = build_in_memory(docs, renderer)
    return tree, summary


def build_in_memory(
    docs: CatalogDocuments, renderer: Renderer | None = None, *, keep_requests: bool = False
) -> tuple[JsonTree, BuildSummary, dict[str, tuple[str, RenderRequest]] | None]:
    """``build_tree`` plus, with ``keep_requests``, what each rendering file was rendered from."""
    start = time.perf_counter()
    builder = ApiBuilder(docs, renderer, keep_requests=keep_requests)
    rows = builder.build_recipes(list(docs.recipes))
    put_catalog_documents(builder.tree, docs, rows, builder.skipped)
    promoted = sum(len(r[1]) for r in rows.values())
    summary = BuildSummary(
        None, len(builder.tree), builder.tree.total_bytes(), len(rows), promoted,
        time.perf_counter() - start, builder.skipped,
    )
    return builder.tree, summary, builder.requests
