"""Typed domain objects: built once from the plain documents, with the documents' meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import HardwareBlock, Recipe, recipe_of, strategies_of, strategy_of


def _docs(recipe: dict) -> CatalogDocuments:
    return CatalogDocuments(root=Path("."), taxonomy={}, platforms={}, strategies={"tp": {"deploy_type": "single_node"}},
                            kv_store={"mc": {"deploy_type": "kv_store_lb"}}, recipes={"o/m": recipe})


def test_absent_null_and_empty_read_as_empty_containers_and_scalars_stay_as_written():
    recipe = Recipe.of({"model": None, "variants": {"default": {"precision": "fp8", "tp": {"h200": 2}}, "bare": None},
                        "features": {"on": {"args": ["--x"]}, "odd": "text"}, "opt_in_features": None})
    assert recipe.model.model_id is None and recipe.opt_in_features == [] and recipe.meta.hardware == {}
    assert recipe.variants["bare"].empty and not recipe.variants["default"].empty
    assert recipe.variant_or_default("bare").precision == "fp8"
    assert recipe.variants["default"].tp == {"h200": 2}
    assert recipe.features["odd"] is None and recipe.features["on"].modes is None


def test_hardware_override_blocks_keep_non_mapping_values_for_the_present_rule():
    recipe = Recipe.of({"hardware_overrides": {"nvidia": {"extra_args": ["--a"]}, "amd": None, "tpu": False}})
    assert isinstance(recipe.hardware_overrides["nvidia"], HardwareBlock)
    assert recipe.hardware_overrides["amd"] is None and recipe.hardware_overrides["tpu"] is False


def test_a_misshapen_section_raises_like_a_lookup_on_it_did():
    with pytest.raises(TypeError):
        Recipe.of({"model": 5})


def test_typed_objects_are_cached_per_document_and_rebuilt_when_it_is_replaced():
    docs = _docs({"model": {"model_id": "o/m"}})
    first = recipe_of(docs, "o/m")
    assert recipe_of(docs, "o/m") is first
    docs.recipes["o/m"] = {"model": {"model_id": "o/m2"}}
    assert recipe_of(docs, "o/m").model.model_id == "o/m2"


def test_strategies_serving_and_kv_store_together():
    docs = _docs({})
    assert strategy_of(docs, "mc").deploy_type == "kv_store_lb"
    assert strategy_of(docs, "nope").deploy_type is None
    assert list(strategies_of(docs)) == ["tp", "mc"]
