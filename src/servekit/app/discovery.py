"""What a catalog offers: its recipes (filtered by hardware or feature), one recipe in detail,
and its hardware profiles, strategies and features. Plain data for ``servekit list`` / ``show``.

Recipes and strategies are read through their typed domain objects (``servekit.catalog.domain``);
a misshapen recipe is reported as the validator's finding for it. Hardware rows copy the
taxonomy entries as written.
"""

from __future__ import annotations

from dataclasses import asdict, field
from typing import Any

from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import NO_STRATEGY, Recipe, RecipeMeta, recipe_of, strategy_of
from servekit.catalog.faults import catalog_faults
from servekit.catalog.ids import recipe_for_model, unknown_model
from servekit.catalog.layers import recipe_origins
from servekit.errors import SelectionError
from servekit.records import record

OFF_MARKS = frozenset({"unsupported", "false", "none", ""})
"""Hardware marks that say a recipe does not run there."""

HARDWARE_COLUMNS = ("display_name", "brand", "generation", "gpu_count", "vram_gb")
"""Taxonomy fields a ``servekit list hardware`` row copies as written."""

HARDWARE_CHOICES = "a hardware id from `servekit list hardware`"
FEATURE_CHOICES = "a feature name from `servekit list features`"
STRATEGY_CHOICES = "a strategy name from `servekit list strategies`"
MODEL_CHOICES = "a recipe id or checkpoint id from `servekit list`"


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def hardware_marks(recipe: Recipe | dict[str, Any]) -> dict[str, str]:
    """Hardware id -> the recipe's mark for it (``verified``, ``supported``, ...), as text.
    ``recipe`` is a typed recipe or a recipe document (read through its typed ``meta``)."""
    meta = recipe.meta if isinstance(recipe, Recipe) else RecipeMeta.of(recipe.get("meta"))
    return {str(hw): str(mark).lower() for hw, mark in meta.hardware.items()}


def runs_on(recipe: Recipe | dict[str, Any], hardware: str) -> bool:
    return hardware_marks(recipe).get(hardware, "unsupported") not in OFF_MARKS


def typed_recipe(docs: CatalogDocuments, recipe_id: str) -> Recipe:
    """The typed recipe of a known id; a misshapen document raises the validator's finding."""
    with catalog_faults(docs.root, docs.sources.get(f"models/{recipe_id}")):
        return recipe_of(docs, recipe_id)


@record
class VariantInfo:
    name: str
    precision: str | None
    model_id: str
    vram_minimum_gb: float | None = None
    supported_hardware: list[str] = field(default_factory=list)
    description: str | None = None


@record
class FeatureInfo:
    name: str
    description: str | None
    modes: list[str]
    default_mode: str | None
    opt_in: bool


@record
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


def _variants(recipe: Recipe) -> list[VariantInfo]:
    base_id = str(recipe.model.model_id or "")
    return [VariantInfo(name=str(name), precision=v.precision, model_id=str(v.model_id or base_id),
                        vram_minimum_gb=v.vram_minimum_gb,
                        supported_hardware=[str(h) for h in _list(v.supported_hardware)], description=v.description)
            for name, v in recipe.variants.items()]


def _features(recipe: Recipe) -> list[FeatureInfo]:
    opt_in = {str(f) for f in recipe.opt_in_features}
    out = []
    for name, f in recipe.features.items():
        if f is None:  # an entry that is not a mapping: listed by name only
            out.append(FeatureInfo(str(name), None, [], None, str(name) in opt_in))
            continue
        out.append(FeatureInfo(str(name), f.description, [str(m) for m in f.modes or {}],
                               f.default_mode, str(name) in opt_in))
    return out


def recipe_info(docs: CatalogDocuments, recipe_id: str, source: str) -> RecipeInfo:
    recipe = typed_recipe(docs, recipe_id)
    path = docs.sources.get(f"models/{recipe_id}")
    return RecipeInfo(
        id=recipe_id, display_name=recipe.meta.title, source=source, variants=_variants(recipe),
        hardware=hardware_marks(recipe), features=_features(recipe),
        strategies=[str(s) for s in recipe.compatible_strategies],
        tasks=[str(t) for t in recipe.meta.tasks], architecture=recipe.model.architecture,
        parameter_count=recipe.model.parameter_count, file=str(path) if path else None,
    )


def _check_name(kind: str, value: str, valid: list[str], choices: str) -> None:
    if value not in valid:
        from servekit.synthesis.resolve import unknown_name

        err = unknown_name(kind, value, valid)
        raise SelectionError(err.message, fix=f"give {choices}")


def _recipes(docs: CatalogDocuments) -> dict[str, Recipe]:
    """Every typed recipe, in catalog order."""
    return {rid: typed_recipe(docs, rid) for rid in docs.recipes}


def _profiles(docs: CatalogDocuments) -> dict[str, Any]:
    """``taxonomy.hardware_profiles`` as written (empty when it is not a mapping)."""
    return _map(docs.taxonomy.get("hardware_profiles"))


def all_features(docs: CatalogDocuments) -> dict[str, list[str]]:
    """Feature name -> the recipes that define it."""
    out: dict[str, list[str]] = {}
    for rid, recipe in _recipes(docs).items():
        for name in recipe.features:
            out.setdefault(str(name), []).append(rid)
    return dict(sorted(out.items()))


def list_recipes(docs: CatalogDocuments, *, hardware: str | None = None,
                 feature: str | None = None) -> list[RecipeInfo]:
    """Every recipe, or those that run on ``hardware`` and offer ``feature``; sorted by id."""
    if hardware is not None:
        _check_name("hardware", hardware, list(_profiles(docs)), HARDWARE_CHOICES)
    if feature is not None:
        _check_name("feature", feature, list(all_features(docs)), FEATURE_CHOICES)
    origins = recipe_origins(docs)
    out = []
    for rid in sorted(docs.recipes):
        recipe = typed_recipe(docs, rid)
        if hardware is not None and not runs_on(recipe, hardware):
            continue
        if feature is not None and feature not in recipe.features:
            continue
        out.append(recipe_info(docs, rid, origins[rid]))
    return out


def find_recipe(docs: CatalogDocuments, model: str) -> str:
    """The recipe id for MODEL: a recipe id, or the checkpoint id of one of its variants (matched
    without regard to case; ``servekit.catalog.ids``)."""
    found = recipe_for_model(docs.recipes, model)
    if found is None:
        raise unknown_model(model, docs.recipes, fix=f"give {MODEL_CHOICES}")
    return found[0]


def show_recipe(docs: CatalogDocuments, model: str) -> RecipeInfo:
    rid = find_recipe(docs, model)
    return recipe_info(docs, rid, recipe_origins(docs)[rid])


def list_hardware(docs: CatalogDocuments) -> list[dict[str, Any]]:
    """Hardware profiles of the catalog, with how many recipes mark each as running there."""
    recipes = _recipes(docs).values()
    rows = []
    for hw, profile in _profiles(docs).items():
        written = _map(profile)
        rows.append({"id": hw, **{key: written.get(key) for key in HARDWARE_COLUMNS},
                     "recipes": sum(runs_on(r, hw) for r in recipes)})
    return rows


def list_strategies(docs: CatalogDocuments) -> list[dict[str, Any]]:
    used = {name: 0 for name in docs.strategies}
    for recipe in _recipes(docs).values():
        for name in recipe.compatible_strategies:
            if name in used:
                used[name] += 1
    with catalog_faults(docs.root):
        serving = {name: strategy_of(docs, name) if doc else NO_STRATEGY for name, doc in docs.strategies.items()}
    return [{"name": name, "display_name": strategy.display_name, "deploy_type": strategy.deploy_type,
             "recipes": used[name]} for name, strategy in serving.items()]


def list_features(docs: CatalogDocuments) -> list[dict[str, Any]]:
    recipes = _recipes(docs)
    rows = []
    for name, recipe_ids in all_features(docs).items():
        features = [recipes[rid].features.get(name) for rid in recipe_ids]
        modes = sorted({m for f in features if f is not None for m in f.modes or {}})
        rows.append({"name": name, "recipes": len(recipe_ids), "modes": modes})
    return rows
