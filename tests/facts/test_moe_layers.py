"""Which layers hold the routed experts, as each family's vLLM decoder layer places its MoE blocks
(``servekit.facts.moe_config.interleaved_dense_layers``), and what the estimate, the fit and the speed
model count from it."""

from __future__ import annotations

import pytest

from servekit.facts.config import facts_from_config
from servekit.facts.moe_config import interleaved_dense_layers
from servekit.facts.estimate import estimated_weight_bytes
from servekit.fit.conversion import expert_params

BASE = {
    "hidden_size": 256, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 4,
    "head_dim": 64, "intermediate_size": 1024, "vocab_size": 100, "torch_dtype": "bfloat16",
    "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
}


@pytest.mark.parametrize("keys,dense", [
    ({}, ()),
    ({"decoder_sparse_step": 2}, (0, 2, 4)),  # Qwen2/3-MoE: MoE where (i + 1) % step == 0
    ({"mlp_only_layers": [0, 5]}, (0, 5)),
    ({"interleave_moe_layer_step": 2}, (0, 2, 4)),  # Llama 4 Maverick's layout
    ({"interleave_moe_layer_step": 1}, ()),  # Llama 4 Scout: every layer
    ({"moe_layer_start_index": 1}, (0,)),  # ERNIE 4.5: from the start index to the end index
    ({"moe_layer_start_index": [1, 2], "moe_layer_end_index": [4, 3], "moe_layer_interval": 1}, (0, 5)),
    ({"moe_layer_freq": 2}, (1, 3, 5)),  # DeepSeek-V2's frequency: MoE where i % freq == 0
    ({"moe_layer_freq": [0, 1, 1, 1, 1, 0]}, (0, 5)),
    ({"expert_layer_period": 2, "expert_layer_offset": 1}, (0, 2, 4)),  # Jamba
])
def test_dense_layers_interleave_as_the_family_places_them(keys, dense):
    assert interleaved_dense_layers({**BASE, **keys}) == dense


def test_the_estimate_prices_dense_layers_at_their_own_width():
    config = {**BASE, "interleave_moe_layer_step": 2, "intermediate_size_mlp": 2048, "intermediate_size": 128}
    facts = facts_from_config(config)
    assert facts.expert_layers() == 3 and facts.has_dense_mlp()
    attention = 256 * 4 * 64 * 4
    moe_layer = 4 * 3 * 256 * 128 + 256 * 4  # experts (gate, up, down) and the router
    dense_layer = 3 * 256 * 2048
    params = 6 * attention + 3 * moe_layer + 3 * dense_layer + 2 * 100 * 256
    assert estimated_weight_bytes(config, facts).total == params * 2


def test_routed_expert_counts_take_the_moe_layers_only():
    every = facts_from_config(BASE)
    half = facts_from_config({**BASE, "decoder_sparse_step": 2})
    assert expert_params(every) == 6 * 4 * 3 * 256 * 128
    assert expert_params(half) == expert_params(every) / 2
    assert not every.has_dense_mlp() and half.has_dense_mlp()


def test_first_dense_layers_and_interleaving_combine():
    facts = facts_from_config({**BASE, "first_k_dense_replace": 1, "moe_layer_freq": 2})
    assert [facts.holds_experts(i) for i in range(6)] == [False, False, True, False, True, False]


ERNIE = {
    # ERNIE 4.5 MoE's keys (ernie45_moe.py): experts from moe_layer_start_index, moe_k per token,
    # moe_num_shared_experts shared experts of the routed width
    "architectures": ["Ernie4_5_MoeForCausalLM"], "hidden_size": 256, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 1024,
    "vocab_size": 100, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "moe_num_experts": 8,
    "moe_k": 2, "moe_num_shared_experts": 2, "moe_intermediate_size": 128, "moe_layer_start_index": 1,
}


def test_ernie_keys_give_experts_per_token_shared_experts_and_the_dense_first_layer():
    facts = facts_from_config(ERNIE)
    assert facts.moe is not None
    assert (facts.moe.experts_per_token, facts.moe.shared_experts, facts.moe.dense_at) == (2, 2, (0,))
    attention = 256 * 4 * 64 * 2 + 256 * 2 * 64 * 2
    moe_layer = (8 + 2) * 3 * 256 * 128 + 256 * 8
    params = 4 * attention + 3 * 1024 * 256 + 3 * moe_layer + 100 * 256
    assert estimated_weight_bytes(ERNIE, facts).total == params * 2


def test_a_second_modalitys_experts_are_weights_but_not_text_routing():
    # ERNIE 4.5 VL (ernie45_vl_moe.py): text and vision pools per MoE layer, text first
    config = {**ERNIE, "moe_num_experts": [8, 8], "moe_intermediate_size": [128, 64],
              "moe_layer_start_index": [1, 1], "moe_layer_end_index": [3, 3]}
    facts = facts_from_config(config)
    assert facts.moe is not None
    assert (facts.moe.num_experts, facts.moe.moe_intermediate_size, facts.moe.modal_experts) == (8, 128, ((8, 64),))
    text_only = estimated_weight_bytes(ERNIE, facts_from_config(ERNIE)).total
    assert estimated_weight_bytes(config, facts).total - text_only == 3 * 8 * 3 * 256 * 64 * 2
    assert expert_params(facts) == 3 * (8 * 128 + 8 * 64) * 3 * 256


def test_llama4_moe_layers_hold_one_shared_expert_of_the_expert_width():
    # vLLM's Llama4MoE builds a shared_expert beside the routed ones; the config states no count
    config = {**BASE, "model_type": "llama4_text", "num_experts": None, "num_local_experts": 4,
              "interleave_moe_layer_step": 1}
    facts = facts_from_config(config)
    assert facts.moe is not None and facts.moe.shared_experts == 1
    assert facts_from_config({**config, "model_type": "mixtral"}).moe.shared_experts == 0


def test_lfm2_moe_dense_first_layers_come_from_num_dense_layers():
    # lfm2_moe.py: layers below num_dense_layers hold a dense MLP
    facts = facts_from_config({**BASE, "num_dense_layers": 2})
    assert facts.moe is not None and facts.moe.dense_layers == 2 and facts.expert_layers() == 4


def test_deepseek_sparse_attention_layers_are_mla_layers():
    config = {**BASE, "kv_lora_rank": 64, "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32,
              "layer_types": ["deepseek_sparse_attention"] * 6}
    assert facts_from_config(config).layers == ("mla",) * 6
