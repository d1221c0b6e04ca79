"""The static API tree served live: each file rendered on demand by the code ``api build`` uses.

A request for ``org/name.json`` or anything under ``org/name/`` renders only the recipes that
publish that id (the recipe itself, or the recipes that promote a variant to it, in catalog
order, so the last one wins as in a full build); catalog-wide files come from the static
documents, and the index files (``models.json``, ``servekit.json``) from one whole in-memory
build. Rendered parts are cached; paths are checked before anything is looked up.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable

from servekit.api.build import ApiBuilder, build_in_memory
from servekit.api.recipe_doc import promotion_target, public_id
from servekit.api.static_docs import put_static_documents
from servekit.api.tree import JsonTree
from servekit.catalog.documents import CatalogDocuments

INDEX_FILES = frozenset({"models.json", "servekit.json"})
SAFE_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*(/[A-Za-z0-9_][A-Za-z0-9._+-]*)*\.json")
"""Relative paths made of plain name segments (no ``..``, no leading dot, no backslash)."""
MAX_PATH = 512
CACHED_GROUPS = 64


def safe_path(path: str) -> str | None:
    """``path`` when it can name a file of the tree, else None (never a file outside it)."""
    if len(path) > MAX_PATH or not SAFE_PATH.fullmatch(path):
        return None
    if any(part in {".", ".."} for part in path.split("/")):
        return None
    return path


def publishers(docs: CatalogDocuments) -> dict[str, tuple[str, ...]]:
    """Published id -> the recipes that write files under it, in catalog order."""
    own = {public_id(rid) for rid in docs.recipes}
    out: dict[str, list[str]] = {}
    for rid, recipe in docs.recipes.items():
        out.setdefault(public_id(rid), []).append(rid)
        variants = recipe.get("variants")
        for variant in (variants.values() if isinstance(variants, dict) else ()):
            target = promotion_target(variant)
            if target is not None and target not in own and rid not in out.setdefault(target, []):
                out[target].append(rid)
    return {key: tuple(ids) for key, ids in out.items()}


def published_id(path: str) -> str:
    """The id a recipe path belongs to: ``org/name`` of ``org/name.json`` or ``org/name/...``."""
    parts = path[: -len(".json")].split("/") if path.count("/") <= 1 else path.split("/")[:2]
    return "/".join(parts[:2])


class LiveTree:
    """Encoded API files of one catalog, rendered when first asked for."""

    def __init__(self, docs: CatalogDocuments) -> None:
        self.docs = docs
        self._publishers = publishers(docs)
        self._known = {public_id(rid) for rid in docs.recipes}
        self._static = JsonTree()
        put_static_documents(self._static, docs)
        self._groups: OrderedDict[tuple[str, ...], JsonTree] = OrderedDict()
        self._whole: JsonTree | None = None
        self._lock = threading.Lock()

    def get(self, path: str) -> bytes | None:
        """The file's bytes exactly as ``api build`` writes them, or None when there is none."""
        checked = safe_path(path)
        if checked is None:
            return None
        if checked in self._static:
            return self._static.raw(checked)
        if checked in INDEX_FILES:
            return self.whole().raw(checked)
        group = self._publishers.get(published_id(checked))
        if group is None:
            return None
        tree = self._whole or self._group_tree(group)
        return tree.raw(checked) if checked in tree else None

    def whole(self) -> JsonTree:
        """The whole tree in memory (built once, on the first request for an index file)."""
        with self._lock:
            if self._whole is None:
                self._whole = build_in_memory(self.docs)[0]
            return self._whole

    def _group_tree(self, recipe_ids: tuple[str, ...]) -> JsonTree:
        with self._lock:
            tree = self._groups.get(recipe_ids)
            if tree is not None:
                self._groups.move_to_end(recipe_ids)
                return tree
            builder = ApiBuilder(self.docs, known_ids=self._known)
            builder.build_recipes(list(recipe_ids))
            self._groups[recipe_ids] = builder.tree
            while len(self._groups) > CACHED_GROUPS:
                self._groups.popitem(last=False)
            return builder.tree

    def paths(self) -> Iterable[str]:
        """Every path of the tree (builds it whole)."""
        return iter(self.whole())
