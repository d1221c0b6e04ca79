"""Turn what a user typed (recipe id, checkpoint id, directory, config.json) into ModelFacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servekit.errors import SelectionError
from servekit.facts.locate import FactsNotFoundError, facts_from_path_or_cache
from servekit.facts.model import ModelFacts
from servekit.facts.shipped import shipped_facts
from servekit.records import record


@record
class ResolvedModel:
    facts: ModelFacts
    recipe_id: str | None = None
    variant: str | None = None
    variant_doc: dict[str, Any] | None = None


def variant_checkpoint(recipe: dict[str, Any], variant: str) -> str:
    """The checkpoint id a recipe variant serves (its ``model_id`` or the recipe's)."""
    variants = recipe.get("variants") or {}
    if variant not in variants:
        raise SelectionError(
            f"recipe has no variant {variant!r}", fix=f"choose one of: {', '.join(variants) or 'default'}"
        )
    doc = variants[variant] or {}
    return doc.get("model_id") or (recipe.get("model") or {}).get("model_id")


def resolve_model(target: str, *, variant: str | None = None, recipes: dict[str, Any] | None = None) -> ResolvedModel:
    """Recipe id (shipped facts of its variant) > existing path > shipped checkpoint > HF cache."""
    if recipes and target in recipes and not Path(target).exists():
        recipe = recipes[target]
        chosen = variant or "default"
        checkpoint = variant_checkpoint(recipe, chosen) if recipe.get("variants") else (
            (recipe.get("model") or {}).get("model_id") or target
        )
        facts = shipped_facts(checkpoint) or _from_cache_or_none(checkpoint)
        if facts is None:
            raise FactsNotFoundError(
                f"no model facts for {checkpoint} (recipe {target}, variant {chosen})",
                fix=f"fetch them (`servekit facts fetch {target}`) or pass its checkpoint directory",
            )
        doc = (recipe.get("variants") or {}).get(chosen)
        return ResolvedModel(facts=facts, recipe_id=target, variant=chosen, variant_doc=doc)
    if not Path(target).expanduser().exists():
        facts = shipped_facts(target)
        if facts is not None:
            return ResolvedModel(facts=facts)
    return ResolvedModel(facts=facts_from_path_or_cache(target))


def _from_cache_or_none(checkpoint: str) -> ModelFacts | None:
    try:
        return facts_from_path_or_cache(checkpoint)
    except FactsNotFoundError:
        return None
