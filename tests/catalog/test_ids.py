"""Matching typed ids against a catalog's (``servekit.catalog.ids``): case-insensitive, closest few."""

from __future__ import annotations

from servekit.catalog.ids import (
    UnknownIdError,
    canonical_id,
    closest_ids,
    model_ids,
    recipe_for_model,
    unknown_model,
)

RECIPES = {
    "Google/gemma-4-31B-it": {"variants": {"default": {"model_id": "google/gemma-4-31B-it"}}},
    "Qwen/Qwen3.8-27B": {"variants": {"default": {"model_id": "Qwen/Qwen3.8-27B"},
                                      "fp8": {"model_id": "Qwen/Qwen3.8-27B-FP8"}}},
    "Qwen/Qwen3-8B": {"variants": {"default": {}}},
}


def test_exact_spelling_first_then_any_case():
    assert canonical_id("Qwen/Qwen3-8B", RECIPES) == "Qwen/Qwen3-8B"
    assert canonical_id("QWEN/qwen3-8b", RECIPES) == "Qwen/Qwen3-8B"
    assert canonical_id("google/gemma-4-31b-it", RECIPES) == "Google/gemma-4-31B-it"
    assert canonical_id("Qwen/Qwen3-8", RECIPES) is None


def test_ids_differing_only_in_case_need_the_exact_spelling():
    ids = ["Org/Model", "org/model"]
    assert canonical_id("org/model", ids) == "org/model" and canonical_id("Org/Model", ids) == "Org/Model"
    assert canonical_id("ORG/MODEL", ids) is None


def test_checkpoint_ids_pick_their_variant_in_any_case():
    assert recipe_for_model(RECIPES, "qwen/qwen3.8-27b-fp8") == ("Qwen/Qwen3.8-27B", "fp8")
    assert recipe_for_model(RECIPES, "qwen/qwen3.8-27b") == ("Qwen/Qwen3.8-27B", None)
    assert recipe_for_model(RECIPES, "Qwen/Qwen3.8-27B-FP8", "default") is None
    assert recipe_for_model(RECIPES, "nobody/nothing") is None
    assert model_ids(RECIPES) == [*RECIPES, "google/gemma-4-31B-it", "Qwen/Qwen3.8-27B-FP8"]


def test_an_unknown_id_says_the_hint_before_the_closest_few():
    error = unknown_model("Qwen/Qwen3.8-27", RECIPES)
    assert isinstance(error, UnknownIdError)
    assert error.message.startswith("unknown recipe 'Qwen/Qwen3.8-27'; closest: Qwen/Qwen3.8-27B")
    hinted = error.with_hint("as a Hugging Face model: no facts", fix="fetch them")
    assert hinted.message.index("as a Hugging Face model") < hinted.message.index("closest:")
    assert hinted.fix == "fetch them"
    far = unknown_model("some-org/some-model", RECIPES)
    assert "closest" not in far.message and "servekit list" in str(far)


def test_at_most_five_close_ids_of_a_long_list():
    ids = [f"Org/model-{i}" for i in range(100)]
    close = closest_ids("org/model-1", ids)
    assert close[0] == "Org/model-1" and len(close) == 5
