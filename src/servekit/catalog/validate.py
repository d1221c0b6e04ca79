"""``validate_catalog(root)``: every problem in a catalog directory, with file, line and key path.

This is the slow, thorough path (pydantic plus cross-reference checks); planning reads the
plain documents and never waits for it. Nothing here raises for bad input: each problem is a
``Finding``, errors and warnings alike, so one run reports all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from servekit.catalog.catalog_refs import kv_store_issues, strategy_issues, taxonomy_issues
from servekit.catalog.documents import recipe_paths
from servekit.catalog.feature_refs import feature_issues
from servekit.catalog.findings import Finding, Severity, from_error, sort_key
from servekit.catalog.hardware_refs import hardware_issues
from servekit.catalog.issues import error, locate
from servekit.catalog.positioned import PositionedDocument, load_positioned
from servekit.catalog.recipe_refs import reference_issues
from servekit.catalog.schema import KvStore, Platforms, Recipe, Strategy, Taxonomy
from servekit.catalog.schema_check import check_schema
from servekit.catalog.vocabulary import CatalogVocabulary
from servekit.errors import CatalogError, Location


@dataclass
class CheckedCatalog:
    """Typed documents (None where a document failed validation) and every finding."""

    root: Path
    findings: list[Finding] = field(default_factory=list)
    taxonomy: Taxonomy | None = None
    platforms: Platforms | None = None
    strategies: dict[str, Strategy | None] = field(default_factory=dict)
    kv_store: dict[str, KvStore | None] = field(default_factory=dict)
    recipes: dict[str, Recipe | None] = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.is_error]


class _Run:
    def __init__(self, root: Path) -> None:
        self.out = CheckedCatalog(root=root)

    def report(self, doc: PositionedDocument, issues: Iterable[Finding]) -> None:
        self.out.findings.extend(locate(issue, doc) for issue in issues)

    def load(self, path: Path) -> PositionedDocument | None:
        try:
            doc = load_positioned(path)
        except CatalogError as exc:
            self.out.findings.append(from_error(exc, "malformed-yaml"))
            return None
        repeats = [
            error(
                key_path,
                f"key '{key_path[-1]}' is written more than once; only the last one counts",
                "delete or merge the repeated key",
                "duplicate-key",
                at_key=True,
            )
            for key_path in doc.duplicates
        ]
        self.report(doc, repeats)
        if not isinstance(doc.data, dict):
            got = "an empty file" if doc.data is None else f"a {type(doc.data).__name__}"
            not_mapping = error(
                (),
                f"expected a mapping at the top of the file, got {got}",
                "write the document as 'key: value' lines",
                "wrong-type",
            )
            self.report(doc, [not_mapping])
            return None
        return doc

    def typed(self, model: type[BaseModel], doc: PositionedDocument, what: str) -> Any:
        instance, issues = check_schema(model, doc.data, what)
        self.report(doc, issues)
        return instance


def _named(run: _Run, folder: Path, what: str) -> dict[str, PositionedDocument]:
    """strategies/ or kv_store/: one document per file, keyed by its ``name``."""
    docs: dict[str, PositionedDocument] = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        doc = run.load(path)
        if doc is None:
            continue
        name = doc.data["name"] if isinstance(doc.data.get("name"), str) else path.stem
        if name in docs:
            clash = error(
                ("name",),
                f"{what} '{name}' is also defined in {docs[name].path.name}",
                "give each file its own name",
                "duplicate-name",
            )
            run.report(doc, [clash])
            continue
        docs[name] = doc
    return docs


def _recipe_path_issue(models: Path, path: Path) -> Finding | None:
    if len(path.relative_to(models).parts) >= 2:
        return None
    return Finding(
        Severity.ERROR,
        "recipe-path",
        "recipe file is not inside an organisation folder",
        f"move it to models/<org>/{path.name} (the Hugging Face id's org)",
        Location(str(path)),
    )


@dataclass
class _Documents:
    taxonomy: PositionedDocument | None
    platforms: PositionedDocument | None
    strategies: dict[str, PositionedDocument]
    kv_store: dict[str, PositionedDocument]
    recipes: dict[str, PositionedDocument]

    def vocabulary(self) -> CatalogVocabulary:
        return CatalogVocabulary.build(
            self.taxonomy.data if self.taxonomy else {},
            self.strategies,
            self.kv_store,
            self.platforms.data if self.platforms else {},
            self.recipes,
        )


def _load_all(run: _Run, root: Path) -> _Documents:
    taxonomy_path = root / "taxonomy.yaml"
    if not taxonomy_path.is_file():
        missing = Finding(
            Severity.ERROR,
            "missing-file",
            "catalog has no taxonomy.yaml",
            "point at a directory laid out like the recipes catalog",
            Location(str(taxonomy_path)),
        )
        run.out.findings.append(missing)
    platforms_path = root / "platforms.yaml"
    recipes: dict[str, PositionedDocument] = {}
    for rid, path in recipe_paths(root).items():
        misplaced = _recipe_path_issue(root / "models", path)
        if misplaced:
            run.out.findings.append(misplaced)
        doc = run.load(path)
        if doc is not None:
            recipes[rid] = doc
    return _Documents(
        taxonomy=run.load(taxonomy_path) if taxonomy_path.is_file() else None,
        platforms=run.load(platforms_path) if platforms_path.is_file() else None,
        strategies=_named(run, root / "strategies", "strategy"),
        kv_store=_named(run, root / "kv_store", "kv_store deployment"),
        recipes=recipes,
    )


def _check_all(run: _Run, docs: _Documents) -> None:
    vocab = docs.vocabulary()
    out = run.out
    if docs.taxonomy:
        out.taxonomy = run.typed(Taxonomy, docs.taxonomy, "taxonomy.yaml")
        run.report(docs.taxonomy, taxonomy_issues(docs.taxonomy.data, vocab))
    if docs.platforms:
        out.platforms = run.typed(Platforms, docs.platforms, "platforms.yaml")
    for name, doc in docs.strategies.items():
        out.strategies[name] = run.typed(Strategy, doc, "a strategy")
        run.report(doc, strategy_issues(doc.data))
    for name, doc in docs.kv_store.items():
        out.kv_store[name] = run.typed(KvStore, doc, "a kv_store deployment")
        run.report(doc, kv_store_issues(doc.data, vocab))
    for rid, doc in docs.recipes.items():
        out.recipes[rid] = run.typed(Recipe, doc, "a recipe")
        run.report(doc, hardware_issues(doc.data, vocab))
        run.report(doc, feature_issues(doc.data))
        run.report(doc, reference_issues(doc.data, vocab))


def check_catalog(root: str | Path) -> CheckedCatalog:
    """Load and validate a whole catalog directory; see ``CheckedCatalog``."""
    run = _Run(Path(root))
    _check_all(run, _load_all(run, run.out.root))
    run.out.findings.sort(key=sort_key)
    return run.out


def validate_catalog(root: str | Path) -> list[Finding]:
    """Every error and warning in the catalog at ``root``, sorted by file and line."""
    return check_catalog(root).findings


_ROOT_CAUSES = frozenset({"malformed-yaml", "missing-file", "duplicate-key", "wrong-type"})


def _first_error(errors: list[Finding]) -> CatalogError:
    # a file that cannot be read makes every reference into it fail too: show the cause
    first = min(errors, key=lambda f: f.code not in _ROOT_CAUSES)
    more = f" (and {len(errors) - 1} more; run 'servekit catalog validate')" if len(errors) > 1 else ""
    return CatalogError(first.message + more, location=first.location, fix=first.fix)


def load_checked_catalog(root: str | Path) -> CheckedCatalog:
    """The typed catalog, or a CatalogError for its first error (with how many there are)."""
    checked = check_catalog(root)
    if checked.errors:
        raise _first_error(checked.errors)
    return checked


def catalog_errors(root: str | Path) -> list[Finding]:
    """Every error of the catalog at ``root`` (the whole validation; keep the list, not the catalog)."""
    return check_catalog(root).errors


def catalog_cause(root: str | Path, recipe_file: Path | None,
                  errors: list[Finding] | None = None) -> CatalogError | None:
    """Why planning from this catalog failed, when the catalog explains it: the first error in
    the recipe's file (any recipe's when None) or in the shared documents; else None. ``errors``:
    the catalog's errors when already found (:func:`catalog_errors`), else it is validated now."""
    models = (Path(root) / "models").resolve()

    def relevant(finding: Finding) -> bool:
        file = Path(finding.location.file).resolve()
        return recipe_file is None or file == Path(recipe_file).resolve() or models not in file.parents

    found = [f for f in (catalog_errors(root) if errors is None else errors) if relevant(f)]
    return _first_error(found) if found else None
