"""Shipped facts cover every variant checkpoint of every bundled recipe, with their sources."""

from __future__ import annotations

import pytest

from servekit.catalog.documents import bundled_catalog_dir, read_documents
from servekit.facts import shipped_facts, shipped_model_ids
from servekit.facts.resolve import variant_checkpoint


def _bundled_checkpoints() -> list[tuple[str, str, str]]:
    docs = read_documents(bundled_catalog_dir())
    out = []
    for rid, recipe in docs.recipes.items():
        for key in recipe.get("variants") or {"default": {}}:
            out.append((rid, key, variant_checkpoint(recipe, key)))
    return out


def test_bundled_catalog_has_recipes():
    assert len(_bundled_checkpoints()) >= 10


@pytest.mark.parametrize("recipe,variant,checkpoint", _bundled_checkpoints())
def test_every_variant_checkpoint_has_shipped_facts(recipe, variant, checkpoint):
    facts = shipped_facts(checkpoint)
    assert facts is not None, f"{recipe} variant {variant}: no shipped facts for {checkpoint}"
    assert facts.model_id == checkpoint
    assert facts.source.startswith("config:") and "weights" in facts.source
    assert facts.weights is not None and facts.weights.total > 0
    assert facts.num_layers > 0 and facts.head_dim > 0


def test_qwen38_facts_match_the_recipe():
    facts = shipped_facts("Qwen/Qwen3.8-27B")
    assert facts.layer_counts() == {"linear": 48, "full": 16}
    assert (facts.num_attention_heads, facts.num_kv_heads, facts.head_dim) == (24, 4, 256)
    assert facts.mtp_layers == 1 and facts.has_vision
    # byte counts from the recipe's own comments
    assert facts.weights.total == 55_563_006_776
    assert shipped_facts("Qwen/Qwen3.8-27B-FP8").weights.total == 30_866_866_928
    assert shipped_facts("Inferact/Qwen3.8-27B-NVFP4").weights.total == 26_381_249_312
    assert shipped_facts("RedHatAI/Qwen3.8-27B-MXFP4").weights.total == 19_832_841_464
    assert shipped_facts("Eco-Tech/Qwen3.8-27B-w8a8").weights.total == 32_128_768_176


def test_gemma3_is_five_local_to_one_global():
    facts = shipped_facts("google/gemma-3-12b-it")
    assert facts.layer_counts() == {"sliding": 40, "full": 8} and facts.sliding_window == 1024


def test_lookup_is_case_insensitive_and_unknown_is_none():
    assert shipped_facts("meta-llama/llama-3.1-8b-instruct") is not None
    assert shipped_facts("nobody/nothing") is None
    assert "meta-llama/Llama-3.1-8B-Instruct" in shipped_model_ids()
