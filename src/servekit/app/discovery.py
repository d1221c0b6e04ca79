"""What a catalog offers: its recipes (filtered by hardware or feature), one recipe in detail,
and its hardware profiles, strategies and features. Plain data for ``servekit list`` / ``show``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.layers import recipe_origins
from servekit.errors import SelectionError

OFF_MARKS = frozenset({"unsupported", "false", "none", ""})
"""Hardware marks that say a recipe does not run there."""

HARDWARE_CHOICES = "a hardware id from `servekit list hardware`"
FEATURE_CHOICES = "a feature name from `servekit list features`"
STRATEGY_CHOICES = "a strategy name from `servekit list strategies`"
MODEL_CHOICES = "a recipe id or checkpoint id from `servekit list`"


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def hardware_marks(recipe: dict[str, Any]) -> dict[str, str]:
    """Hardware id -> the recipe's mark for it (``verified``, ``supported``, ...), as text."""
    marks = _map(_map(recipe.get("meta")).get("hardware"))
    return {str(hw): str(mark).lower() for hw, mark in marks.items()}


def runs_on(recipe: dict[str, Any], hardware: str) -> bool:
    return hardware_marks(recipe).get(hardware, "unsupported") not in OFF_MARKS


@dataclass(frozen=True)
class VariantInfo:
    name: str
    precision: str | None
    model_id: str
    vram_minimum_gb: float | None = None
    supported_hardware: list[str] = field(default_factory=list)
    description: str | None = None


@dataclass(frozen=True)
class FeatureInfo:
    name: str
    description: str | None
    modes: list[str]
    default_mode: str | None
    opt_in: bool


@dataclass(frozen=True)
class RecipeInfo:
    id: str
    display_name: str | None
    source: str
    variants: list[VariantInfo]
    hardware: dict[str, str]
    features: list[FeatureInfo]
    strategies: list[str]
    tasks: list[str]
    architecture: str | None = None
    parameter_count: str | None = None
    file: str | None = None

    def summary(self) -> dict[str, Any]:
        """The ``servekit list --format json`` row."""
        return {
            "id": self.id,
            "display_name": self.display_name,
            "source": self.source,
            "variants": [v.name for v in self.variants],
            "hardware": [hw for hw, mark in self.hardware.items() if mark not in OFF_MARKS],
            "features": [f.name for f in self.features],
            "tasks": self.tasks,
        }

    def detail(self) -> dict[str, Any]:
        """The ``servekit show --format json`` object."""
        return asdict(self)


def _variants(recipe: dict[str, Any]) -> list[VariantInfo]:
    base_id = str(_map(recipe.get("model")).get("model_id") or "")
    out = []
    for name, variant in _map(recipe.get("variants")).items():
        v = _map(variant)
        out.append(VariantInfo(
            name=str(name), precision=v.get("precision"), model_id=str(v.get("model_id") or base_id),
            vram_minimum_gb=v.get("vram_minimum_gb"),
            supported_hardware=[str(h) for h in _list(v.get("supported_hardware"))],
            description=v.get("description"),
        ))
    return out


def _features(recipe: dict[str, Any]) -> list[FeatureInfo]:
    opt_in = {str(f) for f in _list(recipe.get("opt_in_features"))}
    out = []
    for name, feature in _map(recipe.get("features")).items():
        f = _map(feature)
        out.append(FeatureInfo(str(name), f.get("description"), [str(m) for m in _map(f.get("modes"))],
                               f.get("default_mode"), str(name) in opt_in))
    return out


def recipe_info(docs: CatalogDocuments, recipe_id: str, source: str) -> RecipeInfo:
    recipe = docs.recipes[recipe_id]
    meta, model = _map(recipe.get("meta")), _map(recipe.get("model"))
    path = docs.sources.get(f"models/{recipe_id}")
    return RecipeInfo(
        id=recipe_id, display_name=meta.get("title"), source=source, variants=_variants(recipe),
        hardware=hardware_marks(recipe), features=_features(recipe),
        strategies=[str(s) for s in _list(recipe.get("compatible_strategies"))],
        tasks=[str(t) for t in _list(meta.get("tasks"))], architecture=model.get("architecture"),
        parameter_count=model.get("parameter_count"), file=str(path) if path else None,
    )


def _check_name(kind: str, value: str, valid: list[str], choices: str) -> None:
    if value not in valid:
        from servekit.synthesis.resolve import unknown_name

        err = unknown_name(kind, value, valid)
        raise SelectionError(err.message, fix=f"give {choices}")


def all_features(docs: CatalogDocuments) -> dict[str, list[str]]:
    """Feature name -> the recipes that define it."""
    out: dict[str, list[str]] = {}
    for rid, recipe in docs.recipes.items():
        for name in _map(recipe.get("features")):
            out.setdefault(str(name), []).append(rid)
    return dict(sorted(out.items()))


def list_recipes(docs: CatalogDocuments, *, hardware: str | None = None,
                 feature: str | None = None) -> list[RecipeInfo]:
    """Every recipe, or those that run on ``hardware`` and offer ``feature``; sorted by id."""
    if hardware is not None:
        _check_name("hardware", hardware, list(_map(docs.taxonomy.get("hardware_profiles"))), HARDWARE_CHOICES)
    if feature is not None:
        _check_name("feature", feature, list(all_features(docs)), FEATURE_CHOICES)
    origins = recipe_origins(docs)
    out = []
    for rid in sorted(docs.recipes):
        recipe = docs.recipes[rid]
        if hardware is not None and not runs_on(recipe, hardware):
            continue
        if feature is not None and feature not in _map(recipe.get("features")):
            continue
        out.append(recipe_info(docs, rid, origins[rid]))
    return out


def find_recipe(docs: CatalogDocuments, model: str) -> str:
    """The recipe id for MODEL: a recipe id, or the checkpoint id of one of its variants."""
    if model in docs.recipes:
        return model
    for rid in sorted(docs.recipes):
        if any(v.model_id == model for v in _variants(docs.recipes[rid])):
            return rid
    _check_name("recipe", model, sorted(docs.recipes), MODEL_CHOICES)
    raise AssertionError("unreachable")


def show_recipe(docs: CatalogDocuments, model: str) -> RecipeInfo:
    rid = find_recipe(docs, model)
    return recipe_info(docs, rid, recipe_origins(docs)[rid])


def list_hardware(docs: CatalogDocuments) -> list[dict[str, Any]]:
    """Hardware profiles of the catalog, with how many recipes mark each as running there."""
    counts = {hw: sum(runs_on(r, hw) for r in docs.recipes.values())
              for hw in _map(docs.taxonomy.get("hardware_profiles"))}
    rows = []
    for hw, profile in _map(docs.taxonomy.get("hardware_profiles")).items():
        p = _map(profile)
        rows.append({"id": hw, "display_name": p.get("display_name"), "brand": p.get("brand"),
                     "generation": p.get("generation"), "gpu_count": p.get("gpu_count"),
                     "vram_gb": p.get("vram_gb"), "recipes": counts[hw]})
    return rows


def list_strategies(docs: CatalogDocuments) -> list[dict[str, Any]]:
    used = {name: 0 for name in docs.strategies}
    for recipe in docs.recipes.values():
        for name in _list(recipe.get("compatible_strategies")):
            if name in used:
                used[name] += 1
    return [{"name": name, "display_name": _map(doc).get("display_name"),
             "deploy_type": _map(doc).get("deploy_type"), "recipes": used[name]}
            for name, doc in docs.strategies.items()]


def list_features(docs: CatalogDocuments) -> list[dict[str, Any]]:
    rows = []
    for name, recipes in all_features(docs).items():
        modes = sorted({m for rid in recipes for m in _map(_map(_map(docs.recipes[rid].get("features")).get(name)).get("modes"))})
        rows.append({"name": name, "recipes": len(recipes), "modes": modes})
    return rows
