"""Publish the API tree of a catalog: parallel parts, one next version, one swap.

Recipes are independent of each other (except recipes that promote the same repository),
so the build parses and renders them in parts, one forked worker per part, each putting its
files into the next version (the mirror beside the tree, ``servekit.api.mirror.NextVersion``:
a file equal to the tree's stays a link to it, only the others are written), which is swapped
into place at the end. The catalog-wide files (vocabulary, strategies, ``models.json``,
``servekit.json``) are put last by the parent, from the index rows the parts send back.

A rebuild into the tree of an earlier build is incremental when the manifest beside ``--out``
allows it (``servekit.api.incremental``): only the changed recipes are re-rendered. Either way
the new version replaces the whole tree in one step (``servekit.api.commit``): readers see the
old tree or the new one, and a build killed at any point leaves one of them.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from servekit.api import manifest as mf
from servekit.api import stamps
from servekit.api.build import ApiBuilder, BuildSummary, IndexRows, put_catalog_documents
from servekit.api.commit import commit_next, forget
from servekit.api.incremental import BuildInputs, incremental_build, read_inputs
from servekit.api.manifest import Manifest, RecipeEntry, recipe_keys
from servekit.api.mirror import NextVersion
from servekit.api.output import Output, identity, locked
from servekit.api.partition import overlapping_promotions, partition_recipes
from servekit.api.recipe_doc import public_id
from servekit.api.tree import ApiTreeError, JsonTree, check_target
from servekit.api.workers import default_jobs, fork_map
from servekit.catalog.documents import CatalogDocuments, read_documents, resolve_catalog_dir


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
    skipped_by: dict[str, list[str]] = field(default_factory=dict)
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Recipe id -> the ids it may publish files under (``manifest.recipe_keys``)."""
    paths: list[str] = field(default_factory=list)
    """Every file the part put."""
    changed: list[str] = field(default_factory=list)
    """The files whose bytes differ from the tree's (the part wrote them)."""


def _build_part(root: Path, recipe_ids: list[str], known_ids: set[str], target: NextVersion) -> PartResult:
    """Parse, render and put some of the recipes (runs in a worker process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    builder = ApiBuilder(read_documents(root, only_recipes=recipe_ids), known_ids=known_ids)
    rows = builder.build_recipes(recipe_ids)
    changed = target.put(builder.tree.items())
    return PartResult(
        rows, builder.skipped, len(builder.tree), builder.tree.total_bytes(), builder.attempted,
        time.perf_counter() - wall, time.process_time() - cpu, builder.skipped_by,
        {rid: recipe_keys(rid, builder.docs.recipes[rid]) for rid in recipe_ids}, list(builder.tree),
        changed,
    )


def _redo_overlaps(
    root: Path, results: list[PartResult], known_ids: set[str], order: list[str], target: NextVersion
) -> tuple[PartResult | None, set[str]]:
    """Re-render, in catalog order, recipes of different parts that publish the same id;
    also returns those ids."""
    shared = overlapping_promotions([part.attempted for part in results])
    if not shared:
        return None, shared
    involved = {rid for part in results for rid, ts in part.attempted.items() if shared & set(ts)}
    ids = [rid for rid in order if rid in involved]
    mirror = Path(target.mirror)
    for owner in shared:  # forget what the parts put for those ids
        shutil.rmtree(mirror / owner, ignore_errors=True)
        (mirror / f"{owner}.json").unlink(missing_ok=True)
    return _build_part(root, ids, known_ids, target.without(shared)), shared


def build_api(
    out_dir: str | Path, catalog: str | Path | None = None, *, jobs: int | None = None, full: bool = False
) -> BuildSummary:
    """Read a catalog (default: the bundled one), render the API and publish it at ``out_dir``.

    When ``out_dir`` holds the tree of an earlier build whose manifest still matches, only the
    recipes that changed are re-rendered (``servekit.api.incremental``); ``full`` always
    renders and swaps in the whole tree."""
    start = time.perf_counter()
    out_dir = Path(out_dir)
    root = resolve_catalog_dir(catalog)
    check_replaceable(out_dir, root)
    docs = read_documents(root, only_recipes=[])  # vocabulary and strategies; parts parse recipes
    inputs = read_inputs(root, docs)
    with locked(out_dir) as output:
        check_replaceable(out_dir, root)  # a tree a killed build had moved aside may be back
        if not full:
            summary = incremental_build(output, inputs, start)
            if summary is not None:
                return summary
        return _full_build(output, docs, inputs, jobs, start)


def _full_build(
    output: Output, docs: CatalogDocuments, inputs: BuildInputs, jobs: int | None, start: float
) -> BuildSummary:
    """Render every recipe in parallel parts into the next version and swap it into place."""
    root, paths, out_dir = inputs.root, inputs.paths, output.path
    known_ids = {public_id(rid) for rid in paths}
    parts = partition_recipes(paths, jobs or default_jobs())
    forget(output)  # the mirror is about to change
    target = NextVersion.scan(out_dir, output.mirror)
    phases = {"read": time.perf_counter() - start}
    mark = time.perf_counter()
    results = fork_map(lambda ids: _build_part(root, ids, known_ids, target), parts)
    phases["parts"] = time.perf_counter() - mark
    for number, part in enumerate(results):
        phases[f"part {number} wall"] = part.seconds
        phases[f"part {number} cpu"] = part.cpu_seconds
    mark = time.perf_counter()
    redo, shared = _redo_overlaps(root, results, known_ids, list(paths), target)
    rows: dict[str, IndexRows] = {}
    for part in [*results, *([redo] if redo else [])]:
        rows.update(part.rows)
    catalog_tree = JsonTree()
    skipped = [line for part in results for line in part.skipped]
    put_catalog_documents(catalog_tree, docs, rows, skipped, order=list(paths))
    changed = set(target.put(catalog_tree.items()))
    record = full_manifest(inputs, results, redo, shared, rows)
    files = record.tree_files()
    for part in [*results, *([redo] if redo else [])]:
        changed.update(part.changed)
    changed = (changed & files) | set(target.finish(files))
    swapped = commit_next(output)
    phases["publish"] = time.perf_counter() - mark
    total = catalog_tree.total_bytes() + sum(p.bytes for p in results)
    dirs = stamps.dirs_of(files)
    mf.save(out_dir, replace(record, bytes=total, tree=identity(out_dir), mirror=identity(output.mirror),
                             pending=tuple(sorted(changed)) if swapped else (),
                             dirs=stamps.read_stamps(out_dir, dirs),
                             mirror_dirs=stamps.read_stamps(output.mirror, stamps.dirs_of(target.tree_files)
                                                            if swapped else dirs)))
    return BuildSummary(
        out_dir=out_dir,
        files=len(files),
        bytes=total,
        recipes=len(rows),
        promoted=sum(len(r[1]) for r in rows.values()),
        seconds=time.perf_counter() - start,
        skipped=skipped,
        phases=phases,
    )


def full_manifest(
    inputs: BuildInputs, results: list[PartResult], redo: PartResult | None, shared: set[str],
    rows: dict[str, IndexRows],
) -> Manifest:
    """What a full build wrote, from what its parts sent back."""
    keys: dict[str, tuple[str, ...]] = {}
    attempted: dict[str, list[str]] = {}
    skipped_by: dict[str, list[str]] = {}
    written: set[str] = set()
    for part in results:
        keys.update(part.keys)
        attempted.update(part.attempted)
        skipped_by.update(part.skipped_by)
        written.update(part.paths)
    if redo is not None:
        written = {rel for rel in written if mf.owner_of(rel) not in shared} | set(redo.paths)
    recipes = {
        rid: RecipeEntry(inputs.digests[rid], rows[rid], keys[rid], tuple(attempted.get(rid, ())),
                         tuple(skipped_by.get(rid, ())))
        for rid in inputs.order
    }
    ids = {key for entry in recipes.values() for key in entry.keys}
    return Manifest(inputs.environment, inputs.shared, tuple(inputs.order), recipes,
                    mf.files_by_id(written, ids), tuple(inputs.static))


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
