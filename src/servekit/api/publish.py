"""Publish the API tree of a catalog: parallel parts, one staged directory, one swap.

Recipes are independent of each other (except recipes that promote the same repository),
so the build parses and renders them in parts, one forked worker per part, each writing its
files into the staging directory that is swapped into place at the end. The catalog-wide
files (vocabulary, strategies, ``models.json``, ``servekit.json``) are written last by the
parent, from the index rows the parts send back.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from servekit.api.build import ApiBuilder, BuildSummary, IndexRows, put_catalog_documents
from servekit.api.partition import overlapping_promotions, partition_recipes
from servekit.api.recipe_doc import public_id
from servekit.api.tree import ApiTreeError, JsonTree, check_target, staged_directory
from servekit.api.workers import default_jobs, fork_map
from servekit.catalog.documents import read_documents, recipe_paths, resolve_catalog_dir


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
    check_replaceable(out_dir, root)
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


TREE_MARKERS = (("servekit.json",), ("models.json", "taxonomy.json"))
"""Files at the root of an API tree (servekit's, or the reference builder's)."""


def check_replaceable(out_dir: Path, catalog_root: Path) -> None:
    """The build replaces ``out_dir`` as a whole: refuse anything but a new or empty directory
    or an earlier API tree, so a mistyped ``--out`` never deletes unrelated files."""
    check_target(out_dir)
    out = out_dir.resolve()
    catalog = catalog_root.resolve()
    if out == catalog or out in catalog.parents:
        raise ApiTreeError(
            f"--out {out_dir} holds the catalog being built", fix="write the API tree somewhere else"
        )
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return
    if not any(all((out_dir / name).is_file() for name in marker) for marker in TREE_MARKERS):
        raise ApiTreeError(
            f"--out {out_dir} is not empty and holds no API tree (no servekit.json or models.json)",
            fix="pass a new or empty directory, or one an earlier `servekit api build` wrote",
        )


def _count_files(folder: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(folder))
