"""The default catalog is layered: the synced catalog underneath, the bundled one on top.

With no ``--catalog`` and no ``$SERVEKIT_CATALOG``, recipes are the synced ones plus the bundled
ones (the bundled recipe wins for an id both define); hardware profiles, strategies, kv_store
documents, tasks and platforms merge the same way, key by key. Each document keeps its own file
in ``CatalogDocuments.sources``, so error messages still name the file that said it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servekit.catalog.documents import (
    CatalogDocuments,
    DefaultCatalogDir,
    bundled_catalog_dir,
    read_single,
    single_recipe_paths,
)
from servekit.catalog.store import synced_catalog_root
from servekit.records import record

BUNDLED = "bundled"
SYNCED = "synced"


def is_default(root: Path) -> bool:
    """True for the catalog chosen when nothing names one (it gets the synced layer)."""
    return isinstance(root, DefaultCatalogDir) and Path(root) == bundled_catalog_dir()


def catalog_layers(root: Path) -> list[Path]:
    """The directories ``root`` stands for, lowest first (one unless it is the default)."""
    if not is_default(root):
        return [Path(root)]
    synced = synced_catalog_root()
    bundled = bundled_catalog_dir()
    return [synced, bundled] if synced is not None else [bundled]


def layer_name(root: Path, path: Path | None) -> str:
    """``bundled``, ``synced``, or the catalog directory, for a file of the catalog ``root``."""
    if path is None:
        return str(root)
    layer = layer_of(root, path)
    if layer == bundled_catalog_dir():
        return BUNDLED
    synced = synced_catalog_root()
    return SYNCED if synced is not None and layer == synced else str(layer)


def layer_of(root: Path, path: Path | None) -> Path:
    """The directory of ``root``'s layers that holds ``path`` (``root`` itself when none does)."""
    if path is not None:
        resolved = Path(path).resolve()
        for layer in reversed(catalog_layers(root)):
            if layer.resolve() in resolved.parents:
                return layer
    return Path(root)


def layered_recipe_paths(root: Path) -> dict[str, Path]:
    """Recipe id -> file over every layer, the upper layer winning; sorted by id."""
    merged: dict[str, Path] = {}
    for layer in catalog_layers(root):
        merged.update(single_recipe_paths(layer))
    return dict(sorted(merged.items()))


def _merge_list(lower: list[Any], upper: list[Any]) -> list[Any]:
    """Items of ``upper``, then those of ``lower`` it lacks (by ``id`` for mappings)."""
    def key(item: Any) -> Any:
        return ("id", item.get("id")) if isinstance(item, dict) and "id" in item else ("value", repr(item))

    seen = {key(item) for item in upper}
    return [*upper, *(item for item in lower if key(item) not in seen)]


def merge_mapping(lower: dict[str, Any], upper: dict[str, Any]) -> dict[str, Any]:
    """One level deep: mappings and lists merge key by key (upper wins), anything else is upper's."""
    out: dict[str, Any] = dict(upper)
    for name, value in lower.items():
        mine = upper.get(name)
        if name not in upper:
            out[name] = value
        elif isinstance(mine, dict) and isinstance(value, dict):
            out[name] = {**mine, **{k: v for k, v in value.items() if k not in mine}}
        elif isinstance(mine, list) and isinstance(value, list):
            out[name] = _merge_list(value, mine)
    return out


def _merge(lower: CatalogDocuments, upper: CatalogDocuments, root: Path) -> CatalogDocuments:
    upper_names = {k for k in upper.sources}
    sources = {**{k: v for k, v in lower.sources.items() if k not in upper_names}, **upper.sources}
    return CatalogDocuments(
        root=root,
        taxonomy=merge_mapping(lower.taxonomy, upper.taxonomy),
        platforms=merge_mapping(lower.platforms, upper.platforms),
        strategies={**lower.strategies, **upper.strategies},
        kv_store={**lower.kv_store, **upper.kv_store},
        recipes=dict(sorted({**lower.recipes, **upper.recipes}.items())),
        sources=sources,
    )


def read_layered(root: Path, only_recipes: list[str] | None) -> CatalogDocuments:
    """Every layer of ``root`` read (only the named recipes, when given) and merged."""
    layers = catalog_layers(root)
    merged: CatalogDocuments | None = None
    taken: set[str] = set()
    for layer in reversed(layers):
        ids = [rid for rid in single_recipe_paths(layer) if rid not in taken]
        taken.update(ids)
        wanted = ids if only_recipes is None else [rid for rid in ids if rid in only_recipes]
        docs = read_single(layer, wanted)
        merged = docs if merged is None else _merge(docs, merged, root)
    assert merged is not None
    merged.root = root
    return merged


@record
class CatalogInUse:
    """One catalog directory a plan reads, as ``servekit catalog list`` shows it."""

    name: str
    """``bundled``, ``synced`` or the directory."""
    path: Path
    source: str
    revision: str
    recipe_count: int
    synced_at: str | None = None
    age_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "source": self.source, "revision": self.revision,
                "recipes": self.recipe_count, "synced_at": self.synced_at, "age_seconds": self.age_seconds}


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("servekit")
    except PackageNotFoundError:
        return "unknown"


def catalogs_in_use(root: Path) -> list[CatalogInUse]:
    """The directories ``root`` stands for, top layer first, with where each came from."""
    from servekit.catalog.store import read_record

    out = []
    for layer in reversed(catalog_layers(root)):
        count = len(single_recipe_paths(layer))
        if is_default(root) and layer == bundled_catalog_dir():
            out.append(CatalogInUse(BUNDLED, layer, "the servekit package", f"servekit {_package_version()}", count))
            continue
        sync_record = read_record(layer.parent) if is_default(root) else None
        if sync_record is None:
            out.append(CatalogInUse(str(layer), layer, str(layer), "(a directory, read as it is)", count))
            continue
        out.append(CatalogInUse(SYNCED, layer, sync_record.source, sync_record.revision, count,
                                sync_record.synced_at, sync_record.age_seconds()))
    return out


def recipe_origins(docs: CatalogDocuments) -> dict[str, str]:
    """Recipe id -> ``bundled``, ``synced`` or the catalog directory it was read from."""
    root = docs.root
    names = {}
    for layer in catalog_layers(root):
        if is_default(root):
            names[layer.resolve()] = BUNDLED if layer == bundled_catalog_dir() else SYNCED
        else:
            names[layer.resolve()] = BUNDLED if Path(root) == bundled_catalog_dir() else str(root)
    out = {}
    for rid in docs.recipes:
        path = docs.sources.get(f"models/{rid}")
        found = next((names[p] for p in names if path is not None and p in path.resolve().parents), str(root))
        out[rid] = found
    return out
