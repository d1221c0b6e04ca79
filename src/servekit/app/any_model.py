"""Planning a model no recipe names: check the request, find the hardware, read the facts, plan.

``servekit plan`` falls back to this when MODEL is neither a recipe id nor a variant's
checkpoint: a local checkpoint directory, a Hugging Face id or a Hugging Face URL.
"""

from __future__ import annotations

from typing import Any

from servekit.app.generic_plan import generic_plan
from servekit.app.model_facts import generic_model
from servekit.app.model_ref import ModelRef
from servekit.app.request import PlanRequest
from servekit.catalog.documents import CatalogDocuments
from servekit.errors import SelectionError
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
    if request.nodes not in (None, 1):
        raise SelectionError(f"--nodes {request.nodes}: a plan without a recipe runs on one node",
                             fix="leave out --nodes, or plan a recipe with a multi-node strategy")


def hardware_for(docs: CatalogDocuments, request: PlanRequest) -> tuple[str, dict[str, Any], str | None]:
    """(hardware id, its taxonomy entry, a note when it was defaulted)."""
    profiles = docs.taxonomy.get("hardware_profiles") or {}
    if request.hardware is None:
        name = DEFAULT_HARDWARE if DEFAULT_HARDWARE in profiles else next(iter(profiles), None)
        if name is None:
            raise SelectionError("the catalog defines no hardware profiles", fix="pass --catalog with a taxonomy.yaml")
        return name, profiles[name], f"hardware: {name} (the default; choose another with --hardware)"
    if request.hardware not in profiles:
        raise unknown_name("hardware", request.hardware, sorted(profiles))
    return request.hardware, profiles[request.hardware], None


def plan_any_model(docs: CatalogDocuments, request: PlanRequest, ref: ModelRef, *,
                   engine: str = "vllm", fetch: bool = False) -> tuple[Plan, dict[str, Any]]:
    """The plan of the model ``ref`` names on the requested hardware, and its checks; a hub
    model's facts come from the caches (``fetch``: fetched first when missing)."""
    refuse_recipe_options(request, ref)
    hardware, profile, note = hardware_for(docs, request)
    model = generic_model(ref, fetch=fetch)
    return generic_plan(model, profile, hardware, hardware_note=note, engine=engine)
