"""DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): each MLA layer's lightning indexer keeps its
own key cache beside the latent, ``index_head_dim`` FP8 values and one FP32 scale per 128 of them
(vLLM's ``DeepseekV32IndexerCache``), whatever the KV cache dtype."""

from __future__ import annotations

from servekit.facts.config import facts_from_config
from servekit.fit.kv import attention_token_bytes, indexer_token_bytes

MLA = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8, "kv_lora_rank": 512,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 256,
    "vocab_size": 1000, "torch_dtype": "bfloat16",
}
DSA = {**MLA, "model_type": "deepseek_v32", "index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048}


def test_the_indexer_adds_its_key_and_scales_per_token_and_layer():
    facts = facts_from_config(DSA)
    assert facts.indexer is not None and facts.indexer.head_dim == 128 and indexer_token_bytes(facts) == 128 + 4
    assert attention_token_bytes(facts, "mla", 2, 8) == (512 + 64) * 2 + 132
    # an FP8 latent shrinks; the indexer's cache keeps its own format
    assert attention_token_bytes(facts, "mla", 1, 8) == (512 + 64) + 132


def test_mla_without_an_indexer_is_unchanged():
    facts = facts_from_config(MLA)
    assert facts.indexer is None and indexer_token_bytes(facts) == 0
    assert attention_token_bytes(facts, "mla", 2, 8) == (512 + 64) * 2


def test_a_kv_point_reads_the_same_layout_keys_as_a_config():
    from servekit.fit.points import facts_from_point

    point_facts, _ = facts_from_point(DSA)
    assert point_facts.indexer == facts_from_config(DSA).indexer
    hybrid = {"num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2,
              "head_dim": 128, "hybrid_override_pattern": "M-*-", "mlp_hidden_act": "relu2",
              "mamba_num_heads": 32, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8}
    point_facts, _ = facts_from_point(hybrid)
    config_facts = facts_from_config(hybrid)
    assert (point_facts.layers, point_facts.split_blocks, point_facts.mlp_projections) == \
        (config_facts.layers, config_facts.split_blocks, config_facts.mlp_projections) == \
        (("linear", "none", "full", "none"), True, 2)


def test_minimax_m3_indexes_the_layers_its_sparse_attention_config_marks():
    # vllm/models/minimax_m3: a bf16 key of sparse_index_dim per token on each sparse layer, on every TP rank
    config = {"architectures": ["MiniMaxM3ForCausalLM"], "model_type": "minimax_m3", "hidden_size": 1024,
              "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128,
              "vocab_size": 100, "sparse_attention_config": {"use_sparse_attention": True, "sparse_index_dim": 128,
                                                             "sparse_attention_freq": [0, 1, 1, 1]}}
    facts = facts_from_config(config)
    assert facts.indexer is not None and (facts.indexer.kind, facts.indexer.layers) == ("full", 3)
    per_layer = 4 * (128 + 128) * 2
    assert attention_token_bytes(facts, "full", 2, 1) == per_layer + 3 / 4 * 128 * 2
    # TP 4 splits the KV heads, not the indexer's key
    assert attention_token_bytes(facts, "full", 2, 4) == per_layer / 4 + 3 / 4 * 128 * 2
