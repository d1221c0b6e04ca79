"""Read a catalog directory into plain documents (dicts, lists, str, int, float, bool).

This is the fast path every surface uses: YAML goes through ruamel's C-backed safe loader and
is normalised the way the public recipes site normalises it (dates become ISO strings).
Validation with line numbers lives in ``servekit.catalog.validate``; it re-reads files in
round-trip mode only when asked to.

Layout of a catalog directory::

    taxonomy.yaml            hardware_profiles, tasks, ...
    platforms.yaml           (optional) third-party deploy platforms
    strategies/*.yaml        one serving strategy per file, keyed by its ``name``
    kv_store/*.yaml          one kv_store deployment per file, keyed by its ``name``
    models/ORG/NAME.yaml     one recipe per file; its id is ``ORG/NAME``

With no catalog named, ``resolve_catalog_dir`` returns the bundled directory marked as the
default, and reading it layers the synced catalog underneath (``servekit.catalog.layers``).
Documents parsed once are kept as JSON until their files change (``servekit.catalog.parsed_cache``):
the shared documents of a directory always, a recipe when it is read on its own (a single plan).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from servekit.catalog import parsed_cache
from servekit.errors import CatalogError, Location

CATALOG_ENV = "SERVEKIT_CATALOG"
RECIPE_SUFFIXES = (".yaml", ".yml")


def bundled_catalog_dir() -> Path:
    """The catalog shipped inside the package."""
    return Path(__file__).resolve().parent.parent / "catalog_data"


class DefaultCatalogDir(type(Path())):  # type: ignore[misc]
    """The bundled catalog's directory as chosen when nothing names a catalog: reading it
    layers the synced catalog underneath (``servekit.catalog.layers``)."""

    __slots__ = ()


def resolve_catalog_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--catalog`` wins, then ``$SERVEKIT_CATALOG``, then the bundled catalog layered over
    the synced one (one directory alone in the first two cases)."""
    chosen = explicit or os.environ.get(CATALOG_ENV)
    path = Path(chosen).expanduser() if chosen else DefaultCatalogDir(bundled_catalog_dir())
    if not path.is_dir():
        raise CatalogError(
            "catalog directory does not exist" if not path.exists() else "catalog is not a directory",
            location=Location(str(path)),
            fix=f"pass --catalog DIR or set {CATALOG_ENV} to a directory with taxonomy.yaml",
        )
    return path


def normalise(value: Any) -> Any:
    """Plain JSON-able values: dates to ISO strings, mappings to dicts, sequences to lists."""
    import datetime  # stdlib; only dates read from YAML need it (a plan from the parsed cache does not)

    return _plain(value, datetime)


def _plain(value: Any, dt: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v, dt) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, dt) for v in value]
    return value


@lru_cache(maxsize=1)
def _safe_yaml():
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=False)
    return yaml


def read_text(path: Path) -> str:
    """A catalog file's text; an unreadable or non-UTF-8 file is a CatalogError."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise CatalogError(
            f"cannot read file: {reason}",
            location=Location(str(path)),
            fix="make the file readable UTF-8 text",
        ) from None


def yaml_error(path: Path, exc: Exception) -> CatalogError:
    """A ruamel syntax error as a CatalogError at its line and column."""
    from ruamel.yaml.error import MarkedYAMLError

    if not isinstance(exc, MarkedYAMLError):
        return CatalogError(f"malformed YAML: {exc}", location=Location(str(path)), fix="fix the YAML syntax")
    mark = exc.problem_mark or exc.context_mark
    problem = str(exc.problem or exc.context or "unreadable YAML")
    if exc.context and exc.problem:
        started = exc.context_mark
        where = f" (started at line {started.line + 1})" if started and mark and started.line != mark.line else ""
        problem = f"{exc.problem}, {exc.context}{where}"
    return CatalogError(
        f"malformed YAML: {problem}",
        location=Location(str(path), mark.line + 1 if mark else None, mark.column + 1 if mark else None),
        fix="fix the YAML syntax at that line (indentation, quoting, a missing ':')",
    )


def read_yaml(path: Path) -> Any:
    """One YAML file as plain data; a syntax error becomes a CatalogError with its line."""
    from ruamel.yaml.error import YAMLError

    text = read_text(path)
    try:
        data = _safe_yaml().load(text)
    except YAMLError as exc:
        raise yaml_error(path, exc) from None
    try:
        return normalise(data)
    except RecursionError:
        raise CatalogError(
            "an alias refers to the collection that contains it",
            location=Location(str(path)),
            fix="replace the alias (*name) with the values it should repeat",
        ) from None


_VALIDATE_FIX = "run `servekit catalog validate` on the catalog for every problem with its line"


def read_mapping(path: Path, *, empty_ok: bool = False) -> dict[str, Any]:
    """A YAML file whose top level must be a mapping (an empty file is ``{}`` when allowed)."""
    doc = read_yaml(path)
    if doc is None and empty_ok:
        return {}
    if not isinstance(doc, dict):
        raise CatalogError(
            f"expected a mapping at the top of the file, got {type(doc).__name__}",
            location=Location(str(path), 1, 1),
            fix=_VALIDATE_FIX,
        )
    return doc


def _check_hardware_profiles(path: Path, taxonomy: dict[str, Any]) -> None:
    """Every plan walks ``hardware_profiles``; a wrong shape must stop here, not deep in a rule."""
    profiles = taxonomy.get("hardware_profiles")
    if profiles is None:
        return
    if not isinstance(profiles, dict):
        raise CatalogError(f"must be a mapping of hardware ids to profiles, got {type(profiles).__name__}",
                           location=Location(str(path), key_path=("hardware_profiles",)), fix=_VALIDATE_FIX)
    for hw, profile in profiles.items():
        if not isinstance(profile, dict):
            raise CatalogError(f"a hardware profile must be a mapping of its fields, got {type(profile).__name__}",
                               location=Location(str(path), key_path=("hardware_profiles", str(hw))),
                               fix=_VALIDATE_FIX)


def recipe_id_for(models_dir: Path, path: Path) -> str:
    """``models/Qwen/Qwen3-8B.yaml`` -> ``Qwen/Qwen3-8B``."""
    return path.relative_to(models_dir).with_suffix("").as_posix()


@dataclass
class CatalogDocuments:
    """Every document of one catalog directory, as plain data, plus where each came from."""

    root: Path
    taxonomy: dict[str, Any]
    platforms: dict[str, Any]
    strategies: dict[str, dict[str, Any]]
    kv_store: dict[str, dict[str, Any]]
    recipes: dict[str, dict[str, Any]]
    sources: dict[str, Path] = field(default_factory=dict)
    """Maps ``taxonomy``, ``strategies/NAME``, ``kv_store/NAME``, ``models/ID`` to the file."""
    typed: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Typed domain objects built from these documents, once each (``servekit.catalog.domain``)."""


def _named_documents(paths: list[Path], kind: str, sources: dict[str, Path]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        doc = read_mapping(path)
        name = doc.get("name") or path.stem
        out[str(name)] = doc
        sources[f"{kind}/{name}"] = path
    return out


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def recipe_paths(root: Path) -> dict[str, Path]:
    """Recipe id -> file, without reading any recipe (over every layer of the default catalog)."""
    if isinstance(root, DefaultCatalogDir):
        from servekit.catalog.layers import layered_recipe_paths

        return layered_recipe_paths(root)
    return single_recipe_paths(root)


def single_recipe_paths(root: Path) -> dict[str, Path]:
    """Recipe id -> file of one catalog directory, without reading any recipe."""
    models = root / "models"
    if not models.is_dir():
        return {}
    files = sorted(p for p in models.rglob("*") if p.suffix in RECIPE_SUFFIXES and p.is_file())
    return {recipe_id_for(models, p): p for p in files}


def read_documents(root: Path, *, only_recipes: list[str] | None = None) -> CatalogDocuments:
    """Read a whole catalog (or only the named recipes, for a fast single plan); the default
    catalog comes with its synced layer underneath."""
    if isinstance(root, DefaultCatalogDir):
        from servekit.catalog.layers import read_layered

        return read_layered(root, only_recipes)
    return read_single(root, only_recipes)


def _shared_files(root: Path) -> tuple[Path, Path | None, list[Path], list[Path]]:
    """taxonomy.yaml, platforms.yaml (None when absent), the strategy and kv_store files."""
    platforms = root / "platforms.yaml"
    return (root / "taxonomy.yaml", platforms if platforms.is_file() else None,
            _yaml_files(root / "strategies"), _yaml_files(root / "kv_store"))


def _read_shared(root: Path) -> dict[str, Any]:
    """The shared documents of one directory and the files they came from (as relative paths)."""
    taxonomy_path, platforms_path, strategy_files, kv_files = _shared_files(root)
    if not taxonomy_path.is_file():
        raise CatalogError(
            "catalog has no taxonomy.yaml",
            location=Location(str(taxonomy_path)),
            fix="point --catalog at a directory laid out like the recipes catalog",
        )
    files = [taxonomy_path, *([platforms_path] if platforms_path else []), *strategy_files, *kv_files]
    stamp = parsed_cache.stamp(files)
    cached = parsed_cache.load(root, stamp)
    if cached is not None:
        return cached
    taxonomy = read_mapping(taxonomy_path, empty_ok=True)
    _check_hardware_profiles(taxonomy_path, taxonomy)
    sources: dict[str, Path] = {"taxonomy": taxonomy_path}
    platforms = read_mapping(platforms_path, empty_ok=True) if platforms_path else {}
    if platforms_path:
        sources["platforms"] = platforms_path
    shared = {
        "taxonomy": taxonomy,
        "platforms": platforms,
        "strategies": _named_documents(strategy_files, "strategies", sources),
        "kv_store": _named_documents(kv_files, "kv_store", sources),
        "sources": {key: path.relative_to(root).as_posix() for key, path in sources.items()},
    }
    parsed_cache.save(root, stamp, shared)
    return shared


def _read_recipe(path: Path, keep: bool) -> dict[str, Any]:
    """A recipe file's document, from the parsed cache when it is current; ``keep``: store a parse."""
    stamp = parsed_cache.stamp([path])
    cached = parsed_cache.load(path, stamp)
    if cached is not None:
        return cached
    doc = read_mapping(path)
    if keep:
        parsed_cache.save(path, stamp, doc)
    return doc


def read_single(root: Path, only_recipes: list[str] | None = None) -> CatalogDocuments:
    """One catalog directory alone."""
    shared = _read_shared(root)
    sources = {key: root / rel for key, rel in shared["sources"].items()}
    recipes: dict[str, dict[str, Any]] = {}
    paths = single_recipe_paths(root)
    wanted = paths if only_recipes is None else {k: paths[k] for k in only_recipes if k in paths}
    for rid, path in wanted.items():
        recipes[rid] = _read_recipe(path, keep=only_recipes is not None)
        sources[f"models/{rid}"] = path
    return CatalogDocuments(
        root=root,
        taxonomy=shared["taxonomy"],
        platforms=shared["platforms"],
        strategies=shared["strategies"],
        kv_store=shared["kv_store"],
        recipes=recipes,
        sources=sources,
    )
