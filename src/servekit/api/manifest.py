"""What an API build wrote, kept beside ``--out`` so a later build can redo only what changed.

The manifest is ``manifest.json`` in the state directory beside ``--out``
(``servekit.api.output``). It holds the inputs the whole tree depends on (``environment``: servekit's version and code, the
cached model facts; ``shared``: a hash of the catalog-wide files, built from the taxonomy,
platforms, strategies, kv_store and quickstart documents) and, per recipe in catalog order,
the hash of its file, its ``models.json`` rows, the ids it publishes files under, and the
renderings it skipped. ``files`` lists every file of the tree by published id, so a rebuild
knows which files belong to a recipe and can tell whether the tree was changed by hand.
``tree`` and ``mirror`` name the two directories it describes (device and inode, which move with
a directory when it is swapped), and ``pending`` lists the paths where the mirror differs from
the tree.

A build removes the manifest before it starts changing the tree or the mirror
(``servekit.api.commit``) and writes it again once both are complete, so a manifest on disk
always describes the directories next to it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import field
from pathlib import Path
from typing import Any

from servekit.api.build import IndexRows
from servekit.api.output import Output
from servekit.api.recipe_doc import promotion_target, public_id
from servekit.api.stamps import Stamps
from servekit.api.tree import JsonTree, encode_json
from servekit.atomic import write_bytes_atomic
from servekit.records import record

FORMAT = 3
INDEX_FILES = ("models.json", "servekit.json")


@record
class RecipeEntry:
    """One recipe as the last build rendered it."""

    digest: str
    """Hash of the recipe file's bytes."""
    rows: IndexRows
    keys: tuple[str, ...]
    """Ids whose files this recipe may write: its own and every variant's promotion target."""
    attempted: tuple[str, ...]
    """Promotion targets it tried to publish (those not claimed by a stand-alone recipe)."""
    skipped: tuple[str, ...]


@record
class Manifest:
    environment: str
    shared: str
    order: tuple[str, ...]
    """Recipe ids in catalog order."""
    recipes: dict[str, RecipeEntry]
    files: dict[str, tuple[str, ...]]
    """Published id -> the files under it (``{id}.json``, ``{id}/...``) in the tree."""
    static: tuple[str, ...] = field(default=())
    """The catalog-wide files (vocabulary, strategies, kv_store, quickstarts)."""
    bytes: int = 0
    """Size of every file of the tree together."""
    tree: str = ""
    mirror: str = ""
    """``output.identity`` of the tree and of the mirror it was written with."""
    pending: tuple[str, ...] = ()
    """Paths where the mirror differs from the tree (the last build's changes)."""
    dirs: Stamps = field(default_factory=dict)
    """Every directory of the tree with its stamp (``servekit.api.stamps``)."""
    mirror_dirs: Stamps = field(default_factory=dict)
    """The same of the mirror."""

    def tree_files(self) -> set[str]:
        """Every file the tree holds, index files included."""
        out = set(self.static) | set(INDEX_FILES)
        for paths in self.files.values():
            out.update(paths)
        return out


def manifest_path(out_dir: Path) -> Path:
    return Output(Path(out_dir)).manifest


def file_digest(path: Path) -> str:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except OSError:
        return ""  # unreadable: never equal to a stored hash, so the recipe is re-rendered


def recipe_digests(paths: dict[str, Path]) -> dict[str, str]:
    return {rid: file_digest(path) for rid, path in paths.items()}


def shared_digest(static: JsonTree) -> str:
    """Hash of the catalog-wide files: the documents every rendering depends on."""
    digest = hashlib.blake2b(digest_size=16)
    for rel in static:
        digest.update(rel.encode("utf-8") + b"\0" + static.raw(rel) + b"\0")
    return digest.hexdigest()


def recipe_keys(recipe_id: str, recipe: dict[str, Any]) -> tuple[str, ...]:
    """The recipe's own id and every promotion target its variants name."""
    keys = [public_id(recipe_id)]
    variants = recipe.get("variants")
    for variant in (variants.values() if isinstance(variants, dict) else ()):
        target = promotion_target(variant)
        if target is not None and target not in keys:
            keys.append(target)
    return tuple(keys)


def environment_digest() -> str:
    """servekit's version and code (an editable install changes without a new version) and
    the cached model facts that renderings read."""
    import servekit

    digest = hashlib.blake2b(digest_size=16)
    digest.update(servekit.__version__.encode())
    package = Path(servekit.__file__).resolve().parent
    _stat_files(digest, package, skip={"__pycache__", "catalog_data"})
    _facts_cache(digest)
    return digest.hexdigest()


def _stat_files(digest: Any, root: Path, skip: set[str]) -> None:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(files):
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            digest.update(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())


def _facts_cache(digest: Any) -> None:
    """Which checkpoints have cached facts (and when their snapshots last changed)."""
    from servekit.facts.header_cache import header_cache_dir
    from servekit.hfcache import hub_cache_dir

    for folder in (hub_cache_dir(), header_cache_dir()):
        try:
            entries = sorted(e for e in os.listdir(folder) if e.startswith("models--"))
        except OSError:
            continue
        for name in entries:
            try:
                stamp = os.stat(folder / name / "snapshots").st_mtime_ns
            except OSError:
                stamp = _mtime(folder / name)
            digest.update(f"{folder}/{name}:{stamp}\n".encode())


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def files_by_id(paths: set[str], ids: set[str]) -> dict[str, tuple[str, ...]]:
    """Group recipe files under the published id they belong to (``org/name``)."""
    out: dict[str, list[str]] = {}
    for rel in paths:
        owner = owner_of(rel)
        if owner in ids:
            out.setdefault(owner, []).append(rel)
    return {key: tuple(sorted(files)) for key, files in sorted(out.items())}


def owner_of(rel: str) -> str:
    """The published id of a recipe file: ``org/name`` of ``org/name.json`` or ``org/name/...``."""
    parts = rel.split("/")
    if len(parts) == 2:
        return rel[: -len(".json")] if rel.endswith(".json") else rel
    return "/".join(parts[:2])


def tree_entries(root: Path) -> tuple[set[str], set[str]]:
    """(files, directories) below ``root`` as relative ``/``-separated paths; anything that is
    not a directory (links included) counts as a file."""
    files, dirs = tree_inodes(root)
    return set(files), dirs


def tree_inodes(root: Path) -> tuple[dict[str, int], set[str]]:
    """``tree_entries`` with each file's inode number (which ``scandir`` reads with the names,
    at no extra cost); 0 for what is not a regular file (a link, a socket)."""
    files: dict[str, int] = {}
    dirs: set[str] = set()
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(root, rel) if rel else root) as entries:
            for entry in entries:
                path = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_dir(follow_symlinks=False):
                    dirs.add(path)
                    stack.append(path)
                else:
                    files[path] = entry.inode() if entry.is_file(follow_symlinks=False) else 0
    return files, dirs


def to_json(manifest: Manifest) -> bytes:
    recipes = {
        rid: {"digest": e.digest, "rows": [e.rows[0], e.rows[1]], "keys": list(e.keys),
              "attempted": list(e.attempted), "skipped": list(e.skipped)}
        for rid, e in manifest.recipes.items()
    }
    return encode_json({
        "format": FORMAT, "environment": manifest.environment, "shared": manifest.shared,
        "order": list(manifest.order), "recipes": recipes,
        "files": {k: list(v) for k, v in manifest.files.items()}, "static": list(manifest.static),
        "bytes": manifest.bytes, "tree": manifest.tree, "mirror": manifest.mirror,
        "pending": list(manifest.pending), "dirs": manifest.dirs, "mirror_dirs": manifest.mirror_dirs,
    })


def from_json(data: bytes) -> Manifest | None:
    """The manifest in ``data``; None when it is unreadable or of another format."""
    try:
        raw = json.loads(data)
        if raw.get("format") != FORMAT:
            return None
        recipes = {
            rid: RecipeEntry(e["digest"], (e["rows"][0], e["rows"][1]), tuple(e["keys"]),
                             tuple(e["attempted"]), tuple(e["skipped"]))
            for rid, e in raw["recipes"].items()
        }
        return Manifest(raw["environment"], raw["shared"], tuple(raw["order"]), recipes,
                        {k: tuple(v) for k, v in raw["files"].items()}, tuple(raw["static"]),
                        int(raw["bytes"]), str(raw["tree"]), str(raw["mirror"]), tuple(raw["pending"]),
                        dict(raw["dirs"]), dict(raw["mirror_dirs"]))
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


def load(out_dir: Path) -> Manifest | None:
    try:
        return from_json(manifest_path(out_dir).read_bytes())
    except OSError:
        return None


def save(out_dir: Path, manifest: Manifest) -> None:
    """Write the manifest atomically (``servekit.atomic``); a failure only costs a full build
    next time."""
    try:
        write_bytes_atomic(manifest_path(out_dir), to_json(manifest))
    except OSError:
        return
