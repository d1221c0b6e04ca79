"""What a person or a program asks to plan, and finding the recipe it names.

A ``PlanRequest`` carries every choice ``servekit plan`` takes; ``find_model`` turns its MODEL
(a recipe id, or a variant's checkpoint id) into the catalog documents, the recipe id and the
variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from servekit.app.run_site import RunSite
from servekit.catalog.documents import CatalogDocuments, read_documents, recipe_paths, resolve_catalog_dir
from servekit.catalog.ids import canonical_id, recipe_for_model, unknown_model
from servekit.errors import SelectionError
from servekit.records import record
from servekit.synthesis.overrides import Overrides


@record
class EngineOptions:
    """Options for an engine other than the native one (MAX compile target, QAIC mode, devices)."""

    target: str | None = None
    qaic_mode: str | None = None
    devices: str | None = None

    def as_options(self) -> dict[str, Any]:
        """The dialect options ``servekit.engines.plan_translate.translate_plan`` takes."""
        options: dict[str, Any] = {}
        if self.target:
            options["target"] = self.target
        if self.qaic_mode:
            options["mode"] = self.qaic_mode
        if self.devices:
            options["devices"] = parse_devices(self.devices)
        return options


@record
class PlanRequest:
    """One plan's choices; unset ones are filled from the catalog's default rules."""

    model: str
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    tp: int | None = None
    pp: int | None = None
    """Tensor and pipeline parallel sizes a plan without a recipe is laid out with (a recipe's
    plan takes ``--tp`` and ``--pp`` as overrides, ``servekit.synthesis.overrides``)."""
    features: tuple[str, ...] = ()
    no_features: tuple[str, ...] = ()
    modes: Mapping[str, str] = field(default_factory=dict)
    kv_offload: str | None = None
    engine: str = "vllm"
    engine_options: EngineOptions = EngineOptions()
    task: str | None = None
    """vLLM-Omni task key (omni recipes; unset: the recipe's first task)."""
    checks: bool = True
    catalog: str | None = None
    """Catalog directory (unset: ``$SERVEKIT_CATALOG`` or the bundled one)."""
    documents: CatalogDocuments | None = None
    """Documents already read (the Python API); ``catalog`` is then not read again."""
    site: RunSite = RunSite()
    """How and where the plan runs (its container form; this machine), for the checks."""
    overrides: Overrides = Overrides()
    """The person's own values over the recipe's (``--tp``, ``--max-model-len``, ``--image`` ...)."""

    @property
    def names_layout(self) -> bool:
        """The person chose the parallel layout (``--strategy``, ``--nodes``, ``--tp`` or ``--pp``);
        else the plan takes the recipe's default, or the smallest layout that fits (``servekit.app.layout``)."""
        sizes = (self.tp, self.pp, self.overrides.tp, self.overrides.pp)
        return self.strategy is not None or self.nodes is not None or any(size is not None for size in sizes)


def parse_devices(text: str) -> str | list[int]:
    """``--devices`` as ``"cpu"`` or a list of device ids."""
    if text == "cpu":
        return "cpu"
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SelectionError(f"--devices expects ids like 0,1 or 'cpu', got {text!r}") from None


def load_documents(catalog: str | None, recipe_id: str | None = None) -> CatalogDocuments:
    """The catalog's documents (only ``recipe_id``'s recipe when one is named: a fast single plan;
    the id matches without regard to case, ``servekit.catalog.ids``)."""
    root = resolve_catalog_dir(catalog)
    if recipe_id is None:
        return read_documents(root)
    return read_documents(root, only_recipes=[canonical_id(recipe_id, recipe_paths(root)) or recipe_id])


def find_model(request: PlanRequest) -> tuple[CatalogDocuments, str, str | None]:
    """(documents, recipe id, variant) for the request's MODEL: a recipe id, or a variant's
    checkpoint id (which also picks the variant), matched without regard to case; an unknown
    MODEL is an ``UnknownIdError`` naming the closest ids."""
    docs = request.documents or load_documents(request.catalog, request.model)
    found = recipe_for_model(docs.recipes, request.model, request.variant)
    if found is None and request.documents is None:
        docs = load_documents(request.catalog)
        found = recipe_for_model(docs.recipes, request.model, request.variant)
    if found is None:
        raise unknown_model(request.model, docs.recipes)
    return docs, found[0], found[1]
