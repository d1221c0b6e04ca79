"""The Python API's entry point: a loaded catalog that answers "how do I run model X on Y".

    >>> import servekit
    >>> catalog = servekit.Catalog.load()                 # the bundled catalog
    >>> plan = catalog.plan("Qwen/Qwen3.8-27B", hardware="h200", enable=["spec_decoding"])
    >>> catalog.render(plan)["command"]

A thin surface over the planning pipeline (``servekit.app.plan``): loading is
``servekit.catalog.documents``, validation is ``servekit.catalog.validate``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servekit.app.layout import fit_checker, fitted_layout
from servekit.app.plan import synthesized
from servekit.catalog.documents import CatalogDocuments, read_documents, resolve_catalog_dir
from servekit.catalog.faults import catalog_faults
from servekit.synthesis.plan import Plan, Selection
from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import recipe_doc, resolve_selection


@dataclass
class Catalog:
    """A catalog directory read into memory (plain documents, read once)."""

    documents: CatalogDocuments

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, *, validate: bool = False) -> Catalog:
        """Read a catalog: ``path``, else ``$SERVEKIT_CATALOG``, else the bundled one.

        With ``validate=True`` the catalog is first checked in full and a ``CatalogError``
        (file, line, key, fix) is raised for its first error.
        """
        root = resolve_catalog_dir(path)
        if validate:  # the validator loads pydantic: only when asked for
            from servekit.catalog.validate import load_checked_catalog

            load_checked_catalog(root)
        return cls(read_documents(root))

    @property
    def root(self) -> Path:
        return self.documents.root

    @property
    def recipes(self) -> list[str]:
        return sorted(self.documents.recipes)

    @property
    def hardware(self) -> list[str]:
        return list((self.documents.taxonomy.get("hardware_profiles") or {}).keys())

    @property
    def strategies(self) -> list[str]:
        return list(self.documents.strategies)

    def recipe(self, recipe_id: str) -> dict[str, Any]:
        """The recipe document as read (plain data)."""
        return recipe_doc(self.documents, recipe_id)

    def select(
        self,
        recipe_id: str,
        *,
        hardware: str | None = None,
        variant: str | None = None,
        strategy: str | None = None,
        nodes: int | None = None,
        features: Iterable[str] | None = None,
        enable: Iterable[str] = (),
        disable: Iterable[str] = (),
        modes: dict[str, str] | None = None,
        kv_offload: str | None = None,
        engine: str = "vllm",
    ) -> Selection:
        """The user's choices with every default rule applied (a ``Selection``); with no
        ``strategy`` and no ``nodes``, the smallest layout that fits when the default one does
        not (``servekit.app.layout``), as ``servekit plan`` picks it."""
        enable, disable = tuple(enable), tuple(disable)

        def at(strategy: str | None, nodes: int | None) -> Selection:
            return resolve_selection(
                self.documents, recipe_id, hardware=hardware, variant=variant, strategy=strategy,
                node_count=nodes, features=features, enable=enable, disable=disable, modes=modes,
                kv_offload=kv_offload, engine=engine,
            )

        selection = at(strategy, nodes)
        if strategy is not None or nodes is not None:
            return selection
        return fitted_layout(self.documents, selection, at, fit_checker(self.documents))

    def plan(self, recipe_id: str, **choices: Any) -> Plan:
        """Choices (as for ``select``) -> a frozen, engine-neutral ``Plan``."""
        with catalog_faults(self.root, self.documents.sources.get(f"models/{recipe_id}")):
            return synthesized(self.documents, self.select(recipe_id, **choices))

    def render(self, plan: Plan) -> dict[str, Any]:
        """A plan in the public recipes API's rendering-object shape."""
        return render_plan(plan)

    def validate(self) -> list:
        """Every error and warning in this catalog's files, with file, line and key path."""
        from servekit.catalog.validate import validate_catalog

        return validate_catalog(self.root)
