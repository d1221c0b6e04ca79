"""Rebuild an API tree in place by re-rendering only the recipes that changed.

A rebuild is incremental when the manifest beside ``--out`` matches: same servekit (version
and code) and cached model facts, same catalog-wide documents, and a tree holding exactly the
files the manifest lists (a file added or removed by hand forces a full build; the directory
stamps of ``servekit.api.stamps`` tell so without listing every directory). Then the recipes
whose file is new or changed are re-rendered together with every recipe that shares an id with
them (the same promotion target, or a target that is now, or was, a recipe of its own), in
catalog order as a full build renders them. Their new files, the rewritten ``models.json`` and
``servekit.json`` (from the index rows the manifest keeps for the other recipes) and the removal
of their stale files go into the mirror, which is then swapped with the tree in one step
(``servekit.api.commit``). Everything else is a full build.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from servekit.api import manifest as mf
from servekit.api import stamps
from servekit.api.build import ApiBuilder, BuildSummary, IndexRows, build_info, models_index
from servekit.api.commit import commit_delta
from servekit.api.manifest import Manifest, RecipeEntry
from servekit.api.output import Output, identity
from servekit.api.recipe_doc import public_id
from servekit.api.tree import JsonTree, encode_json
from servekit.api.static_docs import put_static_documents
from servekit.catalog.documents import CatalogDocuments, read_documents, recipe_paths
from servekit.records import record

MIN_INCREMENTAL = 4
"""Up to this many recipes (or a quarter of the catalog) are re-rendered in place; more go
through the parallel full build."""


@record
class BuildInputs:
    """What a build depends on, read before anything is rendered."""

    root: Path
    paths: dict[str, Path]
    """Recipe id -> file, in catalog order."""
    digests: dict[str, str]
    static: JsonTree
    """The catalog-wide files (vocabulary, strategies, kv_store, quickstarts)."""
    shared: str
    environment: str

    @property
    def order(self) -> list[str]:
        return list(self.paths)


def changed_recipes(inputs: BuildInputs, old: Manifest) -> list[str]:
    """Recipes whose file is new or changed since the last build, in catalog order."""
    return [rid for rid in inputs.order
            if rid not in old.recipes or old.recipes[rid].digest != inputs.digests[rid]]


def group_to_render(inputs: BuildInputs, old: Manifest, parsed: Mapping[str, dict[str, Any]]
                    ) -> tuple[list[str], list[str]]:
    """(recipes to re-render in catalog order, recipes that are gone); ``parsed`` holds the
    changed recipes' documents."""
    changed = changed_recipes(inputs, old)
    removed = [rid for rid in old.order if rid not in inputs.paths]
    keys: dict[str, tuple[str, ...]] = {rid: e.keys for rid, e in old.recipes.items() if rid in inputs.paths}
    touched: set[str] = set()
    for rid in changed:
        keys[rid] = mf.recipe_keys(rid, parsed[rid])
        touched.update(keys[rid])
    for rid in [*changed, *removed]:
        if rid in old.recipes:
            touched.update(old.recipes[rid].keys)
    group = set(changed)
    grew = True
    while grew:
        grew = False
        for rid in inputs.order:
            if rid not in group and touched.intersection(keys[rid]):
                group.add(rid)
                touched.update(keys[rid])
                grew = True
    return [rid for rid in inputs.order if rid in group], removed


def _usable(output: Output, inputs: BuildInputs) -> Manifest | None:
    """The manifest, when it describes the tree and mirror in place and this build's inputs."""
    old = mf.load(output.path)
    if old is None or (old.environment, old.shared) != (inputs.environment, inputs.shared):
        return None
    if set(old.static) != set(inputs.static):
        return None
    if (old.tree, old.mirror) != (identity(output.path), identity(output.mirror)) or not old.tree:
        return None  # another directory took the place of either
    checked = stamps.verified(output.path, old.dirs, old.tree_files())
    if checked is None:
        return None  # changed by hand: replace it as a whole
    return replace(old, dirs=checked)


def incremental_build(output: Output, inputs: BuildInputs, start: float) -> BuildSummary | None:
    """Re-render what changed into the tree at ``output``; None when only a full build will do."""
    out_dir = output.path
    old = _usable(output, inputs)
    if old is None:
        return None
    changed = changed_recipes(inputs, old)
    docs = read_documents(inputs.root, only_recipes=changed)  # each changed recipe parsed once
    group, removed = group_to_render(inputs, old, docs.recipes)
    if len(group) > max(MIN_INCREMENTAL, len(inputs.paths) // 4):
        return None
    if group != changed:
        docs = read_documents(inputs.root, only_recipes=group)
    phases = {"read": time.perf_counter() - start}
    mark = time.perf_counter()
    known = {public_id(rid) for rid in inputs.paths}
    builder = ApiBuilder(docs, known_ids=known)
    rows = builder.build_recipes(group)
    new = _next_manifest(old, inputs, builder, rows, group)
    phases["render"] = time.perf_counter() - mark
    mark = time.perf_counter()
    old_files = old.tree_files()
    writes, deletes = _changes(old_files, new, builder.tree)
    replaced = _sizes(out_dir, [*deletes, *(rel for rel in writes if rel in old_files)])
    changed = tuple(sorted({*writes, *deletes}))
    new = replace(new, bytes=old.bytes - replaced + sum(len(b) for b in writes.values()))
    files = new.tree_files()
    try:
        commit_delta(output, writes, deletes, old.pending, files)
    except BaseException:  # the tree is as it was; the mirror differs from it at more paths
        mf.save(out_dir, replace(old, pending=tuple(sorted({*old.pending, *changed}))))
        raise
    dirs = stamps.after_change(out_dir, old.mirror_dirs, stamps.dirs_of(files), {*old.pending, *changed})
    mf.save(out_dir, replace(new, tree=identity(out_dir), mirror=identity(output.mirror), pending=changed,
                             dirs=dirs, mirror_dirs=old.dirs))
    phases["publish"] = time.perf_counter() - mark
    skipped = [line for rid in new.order for line in new.recipes[rid].skipped]
    return BuildSummary(
        out_dir=out_dir, files=len(new.tree_files()), bytes=new.bytes, recipes=len(new.order),
        promoted=sum(len(new.recipes[rid].rows[1]) for rid in new.order),
        seconds=time.perf_counter() - start, skipped=skipped, phases=phases, rerendered=len(group),
    )


def _next_manifest(old: Manifest, inputs: BuildInputs, builder: ApiBuilder,
                   rows: dict[str, IndexRows], group: list[str]) -> Manifest:
    recipes: dict[str, RecipeEntry] = {}
    for rid in inputs.order:
        if rid not in rows:
            recipes[rid] = old.recipes[rid]
            continue
        recipes[rid] = RecipeEntry(
            inputs.digests[rid], rows[rid], mf.recipe_keys(rid, builder.docs.recipes[rid]),
            tuple(builder.attempted.get(rid, ())), tuple(builder.skipped_by.get(rid, ())),
        )
    regrouped = {key for rid in group for key in recipes[rid].keys}
    regrouped.update(key for rid in group if rid in old.recipes for key in old.recipes[rid].keys)
    regrouped.update(key for rid in old.order if rid not in inputs.paths for key in old.recipes[rid].keys)
    files = {key: paths for key, paths in old.files.items() if key not in regrouped}
    files.update(mf.files_by_id(set(builder.tree), regrouped))
    return Manifest(inputs.environment, inputs.shared, tuple(inputs.order), recipes,
                    dict(sorted(files.items())), tuple(inputs.static), old.bytes)


def _changes(old_files: set[str], new: Manifest, tree: JsonTree) -> tuple[dict[str, bytes], list[str]]:
    """The files to write (the group's and the index files) and the stale ones to delete."""
    writes = {rel: tree.raw(rel) for rel in tree}
    rows = {rid: new.recipes[rid].rows for rid in new.order}
    skipped = [line for rid in new.order for line in new.recipes[rid].skipped]
    writes["models.json"] = encode_json(models_index(list(new.order), rows))
    writes["servekit.json"] = encode_json(build_info(rows, skipped))
    return writes, sorted(old_files - new.tree_files())


def _sizes(out_dir: Path, rels: list[str]) -> int:
    total = 0
    for rel in rels:
        try:
            total += os.stat(out_dir / rel).st_size
        except OSError:
            pass
    return total


def read_inputs(root: Path, docs: CatalogDocuments) -> BuildInputs:
    """Hash everything a build depends on (``docs`` holds the catalog-wide documents)."""
    paths = recipe_paths(root)
    static = JsonTree()
    put_static_documents(static, docs)
    return BuildInputs(root, paths, mf.recipe_digests(paths), static, mf.shared_digest(static),
                       mf.environment_digest())
