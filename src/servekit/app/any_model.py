"""Planning a model no recipe names: check the request, find the hardware, read the facts, plan.

The hardware is a profile of the catalog, or ``local`` (this machine); ``--nodes``, ``--tp``
and ``--pp`` lay the model over one node or several (``servekit.app.generic_nodes``).

``servekit plan`` falls back to this when MODEL is neither a recipe id nor a variant's
checkpoint: a local checkpoint directory, a Hugging Face id or a Hugging Face URL.
"""

from __future__ import annotations

from typing import Any

from servekit.app.generic_nodes import Topology
from servekit.app.generic_plan import generic_plan
from servekit.app.local_hardware import hardware_entry, local_note
from servekit.app.model_facts import generic_model
from servekit.app.model_ref import ModelRef
from servekit.app.request import PlanRequest
from servekit.catalog.documents import CatalogDocuments
from servekit.errors import SelectionError
from servekit.hardware import LOCAL
from servekit.synthesis.plan import Plan
from servekit.synthesis.resolve import unknown_name

DEFAULT_HARDWARE = "h100"

_RECIPE_ONLY = (
    ("variant", "--variant"), ("strategy", "--strategy"), ("features", "--feature"),
    ("no_features", "--no-feature"), ("modes", "--mode"), ("kv_offload", "--kv-offload"), ("task", "--task"),
)


def refuse_recipe_options(request: PlanRequest, ref: ModelRef) -> None:
    """Options that choose among a recipe's settings mean nothing for a model without one."""
    for field, flag in _RECIPE_ONLY:
        if getattr(request, field):
            raise SelectionError(
                f"{flag} chooses among a recipe's settings, and no recipe names {ref.label}",
                fix=f"leave out {flag}, or plan a recipe (`servekit list` shows them)",
            )


def hardware_for(docs: CatalogDocuments, request: PlanRequest) -> tuple[str, dict[str, Any], str | None]:
    """(hardware id, its taxonomy entry, a note when it was defaulted or is this machine)."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    if request.hardware == LOCAL:
        return LOCAL, hardware_entry(docs, LOCAL) or {}, local_note()
    if request.hardware is None:
        name = DEFAULT_HARDWARE if DEFAULT_HARDWARE in profiles else next(iter(profiles), None)
        if name is None:
            raise SelectionError("the catalog defines no hardware profiles", fix="pass --catalog with a taxonomy.yaml")
        return name, profiles[name], f"hardware: {name} (the default; choose another with --hardware)"
    if request.hardware not in profiles:
        raise unknown_name("hardware", request.hardware, [LOCAL, *sorted(profiles)])
    return request.hardware, profiles[request.hardware], None


def plan_any_model(docs: CatalogDocuments, request: PlanRequest, ref: ModelRef, *,
                   engine: str = "vllm", fetch: bool = False) -> tuple[Plan, dict[str, Any]]:
    """The plan of the model ``ref`` names on the requested hardware, and its checks; a hub
    model's facts come from the caches (``fetch``: fetched first when missing)."""
    refuse_recipe_options(request, ref)
    hardware, profile, note = hardware_for(docs, request)
    model = generic_model(ref, fetch=fetch)
    topology = Topology(1 if request.nodes is None else request.nodes, request.tp, request.pp)
    return generic_plan(model, profile, hardware, hardware_note=note, engine=engine, topology=topology,
                        site=request.site)
