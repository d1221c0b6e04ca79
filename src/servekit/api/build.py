"""Build the static JSON API tree for a catalog.

Layout of the tree (every path relative to ``--out``)::

    models.json                                 index of recipes and promoted variants
    taxonomy.json, platforms.json               the controlled vocabulary, deploy platforms
    strategies.json, strategies/{s}.json        serving strategies
    kv_store.json, kv_store/{s}.json            KV-store deployments
    quickstart/{hardware}.json                  hardware quickstarts, when the catalog has them
    {hf_id}.json                                one recipe, with its recommended command
    {hf_id}/strategies/{s}.json                 alternatives on the default hardware
    {hf_id}/hw/{hw}.json                        recommended command on one hardware
    {hf_id}/hw/{hw}/strategies/{s}.json         alternatives on a non-default hardware

A promoted variant (``variants.X.model_id`` naming another repository) gets the same files
under its own id. servekit's own additions live under the ``servekit`` key of a document.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servekit.api import recipe_doc
from servekit.api.matrix import (
    HardwareRendering,
    MatrixContext,
    Renderer,
    hardware_targets,
    is_omni,
    render_hardware,
)
from servekit.api.render import SynthesisRenderer
from servekit.api.static_docs import put_static_documents
from servekit.api.tree import JsonTree
from servekit.catalog.documents import CatalogDocuments, read_documents, resolve_catalog_dir


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

    def line(self) -> str:
        text = (
            f"wrote {self.files} files ({self.bytes / 1e6:.1f} MB) for {self.recipes} recipes"
            f" + {self.promoted} promoted variants in {self.seconds:.2f}s"
        )
        if self.out_dir is not None:
            text += f" to {self.out_dir}"
        if self.skipped:
            text += f"; {len(self.skipped)} renderings skipped"
        return text


@dataclass
class _RecipeOutput:
    doc: dict[str, Any]
    promoted: list[dict[str, Any]]


def public_id(recipe_id: str) -> str:
    """``org/.../name`` -> ``org/name``: the Hugging Face id a recipe file stands for."""
    parts = recipe_id.split("/")
    return f"{parts[0]}/{parts[-1]}" if len(parts) >= 2 else recipe_id


class ApiBuilder:
    """Renders a whole catalog into a ``JsonTree``."""

    def __init__(self, docs: CatalogDocuments, renderer: Renderer | None = None) -> None:
        self.docs = docs
        strategies = {**docs.strategies, **docs.kv_store}
        self.ctx = MatrixContext(profiles=docs.taxonomy.get("hardware_profiles") or {}, strategies=strategies)
        self.tree = JsonTree()
        self.known_ids = {public_id(rid) for rid in docs.recipes}
        self._renderer = renderer
        self.skipped: list[str] = []

    def _render_with(self, recipe_id: str) -> Renderer:
        if self._renderer is not None:
            return self._renderer
        return SynthesisRenderer(self.docs, recipe_id, self.skipped)

    def build(self) -> tuple[list[dict[str, Any]], int]:
        put_static_documents(self.tree, self.docs)
        parents: list[dict[str, Any]] = []
        promoted: list[dict[str, Any]] = []
        for recipe_id in self.docs.recipes:
            out = self.build_recipe(recipe_id)
            parents.append(recipe_doc.index_entry(out.doc))
            promoted.extend(
                recipe_doc.index_entry(p, derived_from=out.doc["hf_id"]) for p in out.promoted
            )
        self.tree.put("models.json", parents + promoted)
        return parents, len(promoted)

    def build_recipe(self, recipe_id: str) -> _RecipeOutput:
        recipe = self.docs.recipes[recipe_id]
        hf_id = public_id(recipe_id)
        render = self._render_with(recipe_id)
        doc = recipe_doc.public_base(recipe, hf_id)
        headline = self.publish_variant(recipe, "default", hf_id, render)
        if headline is not None:
            doc["recommended_command"] = headline
        promotions: dict[str, str] = {}
        renderings: dict[str, dict[str, Any]] = {}
        for key, variant in (recipe.get("variants") or {}).items():
            target = recipe_doc.promotion_target(variant)
            if target is None or target in self.known_ids:
                continue  # not a separate repository, or a stand-alone recipe of its own wins
            rendered = self.publish_variant(recipe, key, target, render)
            if rendered is not None:
                promotions[key] = target
                renderings[key] = rendered
        recipe_doc.link_promoted(doc, promotions)
        doc = recipe_doc.ordered(doc)
        self.tree.put(f"{hf_id}.json", doc)
        promoted_docs = []
        for key, target in promotions.items():
            twin = recipe_doc.promoted_doc(doc, key, target, renderings[key])
            self.tree.put(f"{target}.json", twin)
            promoted_docs.append(twin)
        return _RecipeOutput(doc, promoted_docs)

    def publish_variant(
        self, recipe: dict[str, Any], variant_key: str, base: str, render: Renderer
    ) -> dict[str, Any] | None:
        """Write one variant's per-hardware files under ``base``; return its headline object."""
        if variant_key not in (recipe.get("variants") or {}):
            return None
        if is_omni(recipe):
            return None
        self.tree.drop_subtree(base)  # a rebuilt id never keeps files of an earlier rendering
        targets = hardware_targets(self.ctx, recipe, variant_key)
        default_hw = targets[0]
        per_hw: dict[str, HardwareRendering] = {}
        for hw in targets:
            built = render_hardware(self.ctx, recipe, variant_key, hw, render)
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
                self.tree.put(path, rendered)
                links[name] = f"/{path}"
            if links:
                built.recommended["alternatives"] = links
            hw_path = f"{base}/hw/{hw}.json"
            self.tree.put(hw_path, built.recommended)
            by_hardware[hw] = f"/{hw_path}"
        return {**per_hw[default_hw].recommended, "by_hardware": by_hardware}


def build_tree(docs: CatalogDocuments, renderer: Renderer | None = None) -> tuple[JsonTree, BuildSummary]:
    """Render a catalog into memory (no disk writes)."""
    start = time.perf_counter()
    builder = ApiBuilder(docs, renderer)
    parents, promoted = builder.build()
    summary = BuildSummary(
        out_dir=None,
        files=len(builder.tree),
        bytes=builder.tree.total_bytes(),
        recipes=len(parents),
        promoted=promoted,
        seconds=time.perf_counter() - start,
        skipped=builder.skipped,
    )
    return builder.tree, summary


def build_api(out_dir: str | Path, catalog: str | Path | None = None) -> BuildSummary:
    """Read a catalog (default: the bundled one), render the API and publish it at ``out_dir``."""
    start = time.perf_counter()
    root = resolve_catalog_dir(catalog)
    docs = read_documents(root)
    tree, summary = build_tree(docs)
    tree.publish(Path(out_dir))
    summary.out_dir = Path(out_dir)
    summary.seconds = time.perf_counter() - start
    return summary
