"""A model's facts for a plan made without a recipe: its config.json and weight bytes.

A local directory is read as it is. A hub model is read from the caches that
``servekit facts fetch`` fills (config.json in the Hugging Face cache, safetensors headers in
servekit's home), never from the network unless fetching is asked for. Weight
bytes are exact from safetensors headers, else the index's ``total_size``, else estimated from
the config and marked so.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from servekit.app.model_ref import ModelRef
from servekit.errors import ServekitError
from servekit.facts.estimate import estimated_weight_bytes
from servekit.facts.fetch import fetch_facts
from servekit.facts.locate import facts_from_dir, facts_from_snapshot, read_config
from servekit.facts.missing import FactsMissingError, missing_facts, missing_message, snapshot_dir
from servekit.facts.model import ModelFacts
from servekit.records import record


@record
class GenericModel:
    """What a plan without a recipe knows about its model."""

    ref: ModelRef
    config: dict[str, Any]
    facts: ModelFacts
    config_path: Path
    weights_basis: str
    """"safetensors headers", "safetensors index (total_size)" or "estimated from config.json"."""
    fetched: bool = False
    """The facts were fetched from the hub for this plan."""
    missing: tuple[str, ...] = ()
    """Facts still missing (``safetensors headers``), with the estimate used instead."""


def _weights_basis(facts: ModelFacts, folder: Path) -> str:
    if facts.weights is None:
        return ""
    if any(folder.glob("*.safetensors")):
        return "safetensors headers"
    return "safetensors index (total_size)"


def _with_estimate(model: GenericModel) -> GenericModel:
    if model.facts.weights is not None:
        return model
    estimate = estimated_weight_bytes(model.config, model.facts)
    return replace(model, facts=replace(model.facts, weights=estimate), weights_basis=estimate.basis or "")


def _local(ref: ModelRef) -> GenericModel:
    assert ref.path is not None
    facts = facts_from_dir(ref.path, model_id=ref.serve_name)
    config_path = ref.path / "config.json"
    basis = _weights_basis(facts, ref.path)
    return GenericModel(ref, read_config(config_path), facts, config_path, basis)


def _hub(ref: ModelRef, fetch: bool) -> GenericModel:
    assert ref.repo_id is not None
    snapshot = snapshot_dir(ref.repo_id, ref.revision)
    fetched = False
    if fetch and (snapshot is None or missing_facts(ref.repo_id, ref.revision)):
        try:
            fetched_facts = fetch_facts(ref.repo_id, ref.revision)
        except ServekitError:
            if snapshot is None:
                raise
        else:
            snapshot, fetched = fetched_facts.snapshot, True
    if snapshot is None:
        raise FactsMissingError(missing_message(ref.repo_id, ref.revision))
    facts = facts_from_snapshot(snapshot, ref.repo_id)
    config_path = snapshot / "config.json"
    missing = tuple(missing_facts(ref.repo_id, snapshot.name))
    basis = "" if facts.weights is None else (
        "safetensors index (total_size)" if "safetensors headers" in missing else "safetensors headers")
    return GenericModel(ref, read_config(config_path), facts, config_path, basis, fetched, missing)


def generic_model(ref: ModelRef, *, fetch: bool = False) -> GenericModel:
    """The facts of the model ``ref`` names (estimated weight bytes when no header is at hand).

    A hub model's facts are read from the caches; ``fetch`` fetches what is missing first."""
    return _with_estimate(_local(ref) if ref.kind == "dir" else _hub(ref, fetch))
