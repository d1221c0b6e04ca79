"""Attention whose sliding and full layers differ in KV heads and whose values are narrower than
its keys (MiMo-V2: ``hybrid_layer_pattern``, ``swa_*`` sizes, ``v_head_dim``), as vLLM caches it
(diff-KV backends keep K and V at their own widths)."""

from __future__ import annotations

from servekit.facts.config import facts_from_config
from servekit.facts.estimate import estimated_weight_bytes
from servekit.fit.kv import attention_token_bytes

MIMO = {
    "architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 512,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 96,
    "v_head_dim": 64, "swa_num_attention_heads": 8, "swa_num_key_value_heads": 4, "swa_head_dim": 96,
    "swa_v_head_dim": 64, "sliding_window": 128, "hybrid_layer_pattern": [0, 1, 1, 1],
    "intermediate_size": 1024, "vocab_size": 100, "torch_dtype": "bfloat16",
}


def test_the_pattern_marks_sliding_layers_and_the_swa_sizes_size_them():
    facts = facts_from_config(MIMO)
    assert facts.layers == ("full", "sliding", "sliding", "sliding") and facts.sliding_window == 128
    assert (facts.num_kv_heads, facts.full_kv_heads, facts.head_dim, facts.value_head_dim) == (4, 2, 96, 64)
    assert attention_token_bytes(facts, "full", 2, 1) == 2 * (96 + 64) * 2
    assert attention_token_bytes(facts, "sliding", 2, 1) == 4 * (96 + 64) * 2


def test_keys_and_values_of_equal_width_are_unchanged():
    plain = {k: v for k, v in MIMO.items() if not k.startswith(("swa_", "v_head"))}
    facts = facts_from_config(plain)
    assert facts.value_head_dim is None and attention_token_bytes(facts, "full", 2, 1) == 2 * 2 * 96 * 2


def test_the_estimate_prices_each_layer_kinds_projections():
    facts = facts_from_config(MIMO)
    full = 512 * 8 * (96 + 64) + 512 * 2 * (96 + 64)  # q, o; k, v
    sliding = 512 * 8 * (96 + 64) + 512 * 4 * (96 + 64)
    mlp = 3 * 512 * 1024
    params = full + 3 * sliding + 4 * mlp + 2 * 100 * 512
    assert estimated_weight_bytes(MIMO, facts).total == params * 2
