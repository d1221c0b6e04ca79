"""Build the static JSON API tree for a catalog.

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

Recipes are independent of each other (except two that promote the same repository), so
the build renders them in parts, one forked worker per part, each writing its files into
the staging directory that is swapped into place at the end.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from servekit.api.partition import overlapping_promotions, partition_recipes
from servekit.api.recipe_doc import public_id
from servekit.api.render import SynthesisRenderer
from servekit.api.static_docs import put_static_documents
from servekit.api.tree import JsonTree, staged_directory
from servekit.api.workers import default_jobs, fork_map
from servekit.catalog.documents import (
    CatalogDocuments,
    read_documents,
    recipe_paths,
    resolve_catalog_dir,
)

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
class PartResult:
    """What one part of a build sends back: index rows per recipe and counters."""

    rows: dict[str, IndexRows]
    skipped: list[str]
    files: int
    bytes: int
    attempted: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
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
        record: bool = False,
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
        self.requests: dict[str, tuple[str, RenderRequest]] | None = {} if record else None
        """With ``record``: path of each rendering file -> (recipe id, what it was rendered from)."""
        self._recipe_id = ""

    def _render_with(self, recipe_id: str) -> Renderer:
        if self._renderer is not None:
            return self._renderer
        return SynthesisRenderer(self.docs, recipe_id, self.skipped)

    def build_recipes(self, recipe_ids: list[str]) -> dict[str, IndexRows]:
        return {rid: self.build_recipe(rid) for rid in recipe_ids}

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
    docs: CatalogDocuments, renderer: Renderer | None = None, *, record: bool = False
) -> tuple[JsonTree, BuildSummary, dict[str, tuple[str, RenderRequest]] | None]:
    """``build_tree`` plus, with ``record``, what each rendering file was rendered from."""
    start = time.perf_counter()
    builder = ApiBuilder(docs, renderer, record=record)
    rows = builder.build_recipes(list(docs.recipes))
    put_catalog_documents(builder.tree, docs, rows, builder.skipped)
    promoted = sum(len(r[1]) for r in rows.values())
    summary = BuildSummary(
        None, len(builder.tree), builder.tree.total_bytes(), len(rows), promoted,
        time.perf_counter() - start, builder.skipped,
    )
    return builder.tree, summary, builder.requests


def _build_part(root: Path, recipe_ids: list[str], known_ids: set[str], staging: Path) -> PartResult:
    """Parse, render and write some of the recipes (runs in a worker process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    builder = ApiBuilder(read_documents(root, only_recipes=recipe_ids), known_ids=known_ids)
    rows = builder.build_recipes(recipe_ids)
    builder.tree.write_into(staging)
    return PartResult(
        rows, builder.skipped, len(builder.tree), builder.tree.total_bytes(), builder.attempted,
        time.perf_counter() - wall, time.process_time() - cpu,
    )


def _redo_overlaps(
    root: Path, results: list[PartResult], known_ids: set[str], order: list[str], staging: Path
) -> PartResult | None:
    """Re-render, in catalog order, recipes of different parts that publish the same id."""
    shared = overlapping_promotions([part.attempted for part in results])
    if not shared:
        return None
    involved = {rid for part in results for rid, ts in part.attempted.items() if shared & set(ts)}
    ids = [rid for rid in order if rid in involved]
    for target in shared:  # forget what the parts wrote for those ids
        shutil.rmtree(staging / target, ignore_errors=True)
        (staging / f"{target}.json").unlink(missing_ok=True)
    return _build_part(root, ids, known_ids, staging)


def build_api(out_dir: str | Path, catalog: str | Path | None = None, *, jobs: int | None = None) -> BuildSummary:
    """Read a catalog (default: the bundled one), render the API and publish it at ``out_dir``."""
    start = time.perf_counter()
    out_dir = Path(out_dir)
    root = resolve_catalog_dir(catalog)
    docs = read_documents(root, only_recipes=[])  # vocabulary and strategies; parts parse recipes
    paths = recipe_paths(root)
    known_ids = {public_id(rid) for rid in paths}
    parts = partition_recipes(paths, jobs or default_jobs())
    phases = {"read": time.perf_counter() - start}
    with staged_directory(out_dir) as staging:
        mark = time.perf_counter()
        results = fork_map(lambda ids: _build_part(root, ids, known_ids, staging), parts)
        phases["parts"] = time.perf_counter() - mark
        for number, part in enumerate(results):
            phases[f"part {number} wall"] = part.seconds
            phases[f"part {number} cpu"] = part.cpu_seconds
        mark = time.perf_counter()
        redo = _redo_overlaps(root, results, known_ids, list(paths), staging)
        rows: dict[str, IndexRows] = {}
        for part in [*results, *([redo] if redo else [])]:
            rows.update(part.rows)
        catalog_tree = JsonTree()
        skipped = [line for part in results for line in part.skipped]
        put_catalog_documents(catalog_tree, docs, rows, skipped, order=list(paths))
        catalog_tree.write_into(staging)
    phases["publish"] = time.perf_counter() - mark
    return BuildSummary(
        out_dir=out_dir,
        files=_count_files(out_dir) if redo else len(catalog_tree) + sum(p.files for p in results),
        bytes=catalog_tree.total_bytes() + sum(p.bytes for p in results),
        recipes=len(rows),
        promoted=sum(len(r[1]) for r in rows.values()),
        seconds=time.perf_counter() - start,
        skipped=skipped,
        phases=phases,
    )


def _count_files(folder: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(folder))
