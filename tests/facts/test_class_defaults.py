"""Keys a config.json leaves out because they equal its configuration class's defaults
(``servekit.facts.config.CLASS_DEFAULTS``)."""

from __future__ import annotations

import pytest

from servekit.facts.config import facts_from_config
from servekit.facts.estimate import estimated_weight_bytes

# google/gemma-3-27b-it's config.json as published: its text_config states no vocabulary, no tying
# and no sliding-window pattern (Gemma3TextConfig's defaults: 262,208 tokens, tied, 5 local : 1 global)
GEMMA3_27B = {
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "torch_dtype": "bfloat16",
    "mm_tokens_per_image": 256,
    "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
                    "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
                    "query_pre_attn_scalar": 168, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                    "sliding_window": 1024},
    "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                      "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                      "patch_size": 14, "vision_use_head": False},
}


def test_gemma3_text_defaults_fill_the_vocabulary_tying_and_layer_pattern():
    facts = facts_from_config(GEMMA3_27B)
    assert facts.vocab_size == 262_208 and facts.tied_embeddings
    assert facts.layer_counts() == {"sliding": 52, "full": 10}


def test_gemma3_27b_estimate_matches_its_checkpoint_bytes():
    # 54,864,980,440 B of safetensors for google/gemma-3-27b-it (BF16; norms are left out of the estimate)
    total = estimated_weight_bytes(GEMMA3_27B, facts_from_config(GEMMA3_27B)).total
    assert total == pytest.approx(54_864_980_440, rel=0.005)


def test_a_stated_key_wins_over_the_class_default():
    config = {**GEMMA3_27B, "text_config": {**GEMMA3_27B["text_config"], "vocab_size": 1000,
                                            "tie_word_embeddings": False}}
    facts = facts_from_config(config)
    assert facts.vocab_size == 1000 and not facts.tied_embeddings
