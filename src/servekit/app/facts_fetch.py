"""``servekit facts fetch MODEL``: which hub repos a MODEL names, and fetching their facts.

A recipe id names the checkpoint of each of its variants (or of ``--variant``); a Hugging Face id
or URL names one repo. Each repo's config.json, safetensors index and headers are fetched without
a weight (``servekit.facts.fetch``); plans, fit and api build then read them offline.
"""

from __future__ import annotations

from typing import Any

from servekit.app.model_ref import hub_url_parts
from servekit.app.request import load_documents
from servekit.catalog.ids import canonical_id
from servekit.errors import SelectionError
from servekit.facts.fetch import FetchedFacts, fetch_facts
from servekit.facts.locate import facts_from_snapshot
from servekit.facts.missing import looks_like_repo_id
from servekit.facts.resolve import variant_checkpoint
from servekit.records import record


@record
class FetchTarget:
    repo_id: str
    revision: str | None = None
    why: str = ""
    """What named it: ``recipe X, variant Y`` or the argument itself."""


def fetch_targets(model: str, *, variant: str | None = None, revision: str | None = None,
                  catalog: str | None = None) -> list[FetchTarget]:
    """The hub repos ``model`` names (a recipe's variant checkpoints, an id, or a URL)."""
    parts = hub_url_parts(model)
    if parts is not None:
        return [FetchTarget(parts[0], revision or parts[1], model)]
    docs = load_documents(catalog, model)
    recipe_id = canonical_id(model, docs.recipes)
    recipe = docs.recipes[recipe_id] if recipe_id is not None else None
    if recipe is not None:
        model = recipe_id
        variants = [variant] if variant else list(recipe.get("variants") or {"default": None})
        targets: list[FetchTarget] = []
        for key in variants:
            checkpoint = (variant_checkpoint(recipe, key) if recipe.get("variants")
                          else (recipe.get("model") or {}).get("model_id") or model)
            if checkpoint and checkpoint not in {t.repo_id for t in targets}:
                targets.append(FetchTarget(checkpoint, revision, f"recipe {model}, variant {key}"))
        return targets
    if variant:
        raise SelectionError(f"--variant {variant}: {model} is not a recipe", fix="leave out --variant")
    if looks_like_repo_id(model):
        return [FetchTarget(model, revision, model)]
    raise SelectionError(
        f"{model!r} names no hub model: not a recipe id, a Hugging Face id (ORG/NAME) or URL",
        fix="a local checkpoint directory needs no fetch: pass it to `servekit plan` as it is",
    )


def fetched_summary(target: FetchTarget, fetched: FetchedFacts) -> dict[str, Any]:
    """What was fetched and what it says, as a JSON-ready dict."""
    facts = facts_from_snapshot(fetched.snapshot, target.repo_id)
    weights = facts.weights
    return {
        "repo_id": target.repo_id,
        "named_by": target.why,
        "revision": target.revision or "main",
        "commit": fetched.commit,
        "config": str(fetched.snapshot / "config.json"),
        "safetensors_shards": len(fetched.shards),
        "headers": None if fetched.headers_file is None else str(fetched.headers_file),
        "architecture": facts.architecture,
        "layers": facts.num_layers,
        "weights_bytes": weights.total if weights else None,
    }


def fetch_model_facts(model: str, *, variant: str | None = None, revision: str | None = None,
                      catalog: str | None = None) -> list[dict[str, Any]]:
    """Fetch the facts of every repo ``model`` names; one summary per repo."""
    out = []
    for target in fetch_targets(model, variant=variant, revision=revision, catalog=catalog):
        out.append(fetched_summary(target, fetch_facts(target.repo_id, target.revision)))
    return out
