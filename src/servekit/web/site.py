"""One served catalog: its documents (read once, at start), the live API tree, the model index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servekit.app.discovery import hardware_marks, list_recipes
from servekit.app.request import load_documents
from servekit.catalog.documents import CatalogDocuments
from servekit.records import record
from servekit.web.live_tree import LiveTree


@record
class ModelRow:
    """One recipe as the model picker and the catalog page list it."""

    id: str
    title: str
    vendor: str
    hardware: tuple[str, ...]
    features: tuple[str, ...]
    checkpoints: tuple[str, ...]
    size: str = ""
    """The parameter count as the recipe writes it (``27B``)."""
    tasks: tuple[str, ...] = ()
    verified: tuple[str, ...] = ()
    """The hardware the recipe marks verified."""


@dataclass
class Site:
    """What the web application serves: one catalog, read when the server starts."""

    catalog: str | None
    docs: CatalogDocuments
    tree: LiveTree
    models: tuple[ModelRow, ...]

    @property
    def root(self) -> Path:
        return self.docs.root

    @property
    def hardware(self) -> dict[str, Any]:
        return dict(self.docs.taxonomy.get("hardware_profiles") or {})


def short_names(profiles: dict[str, Any]) -> dict[str, str]:
    """Hardware id -> its display name, with the id added where two profiles share a name
    (``RTX 5090`` and ``RTX 5090 (rtx_5090_2x)``): short enough for a select on a phone."""
    names = {hw: str((p or {}).get("display_name") or hw) for hw, p in profiles.items()}
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    return {hw: name if counts[name] == 1 else f"{name} ({hw})" for hw, name in names.items()}


def model_rows(docs: CatalogDocuments) -> tuple[ModelRow, ...]:
    rows = []
    for info in list_recipes(docs):
        marks = hardware_marks(docs.recipes[info.id])
        rows.append(ModelRow(
            id=info.id, title=info.display_name or info.id, vendor=info.id.split("/")[0],
            hardware=tuple(hw for hw in info.summary()["hardware"] if hw in marks),
            features=tuple(f.name for f in info.features),
            checkpoints=tuple(dict.fromkeys(v.model_id for v in info.variants if v.model_id)),
            size=str(info.parameter_count or ""), tasks=tuple(info.tasks),
            verified=tuple(hw for hw, mark in marks.items() if mark == "verified"),
        ))
    return tuple(rows)


def load_site(catalog: str | None = None) -> Site:
    """Read the catalog (``None``: ``$SERVEKIT_CATALOG`` or the bundled one) for serving."""
    docs = load_documents(catalog)
    return Site(catalog, docs, LiveTree(docs), model_rows(docs))
