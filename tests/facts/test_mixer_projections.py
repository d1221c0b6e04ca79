"""A constant-state mixer's projection weights, as an estimate from config.json prices them
(``LinearAttentionFacts.projection_width``, servekit.facts.linear): the shapes of vLLM's layers,
checked against a checkpoint whose exact bytes are known."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts.config import facts_from_config
from servekit.facts.estimate import estimated_weight_bytes
from servekit.facts.linear import gated_deltanet, linear_from_config, mamba2
from servekit.facts.shipped import shipped_facts
from servekit.fit.conversion import expert_params


def test_gated_deltanet_projects_to_qkvz_and_ba_and_back_from_the_values():
    # 16 key heads and 32 value heads of 128: q, k (2 x 2048), v, z (2 x 4096), b, a (2 x 32), out from 4096
    assert gated_deltanet(16, 32, 128, 128).projection_width == 2 * 2048 + 2 * 4096 + 2 * 32 + 4096
    # the key and value head sizes enter apart
    assert gated_deltanet(8, 8, 64, 256).projection_width == 2 * 512 + 3 * 2048 + 2 * 8


def test_mamba2_projects_to_gate_x_b_c_dt_and_back_from_the_inner_width():
    inner = 128 * 64
    assert mamba2(128, 64, 128, groups=8).projection_width == 2 * inner + 2 * 8 * 128 + 128 + inner


def test_a_short_convolution_projects_to_three_hidden_widths_and_back():
    found = linear_from_config({"conv_L_cache": 3, "hidden_size": 1024}, 16, 64)
    assert found is not None and found.projection_width == 4 * 1024


def test_the_estimate_of_a_gated_deltanet_checkpoint_matches_its_exact_bytes():
    # Qwen/Qwen3.8-27B in BF16: 55,563,006,776 B on disk (the seed recipe's figure, shipped as exact)
    facts = shipped_facts("Qwen/Qwen3.8-27B")
    assert facts is not None and facts.weights is not None and facts.weights.exact
    config = {"attn_output_gate": True, "tie_word_embeddings": False}
    estimate = estimated_weight_bytes(config, facts).total
    assert estimate == pytest.approx(facts.weights.total, rel=1e-3)
    # four hidden x hidden projections per mixer (the assumption where sizes are missing) fall 1.9% short
    assumed = estimated_weight_bytes(config, replace(facts, linear=replace(facts.linear, projection_width=0))).total
    assert assumed < facts.weights.total * 0.985


def test_a_mixer_without_its_sizes_keeps_the_stated_assumption():
    config = {
        "architectures": ["Qwen3NextForCausalLM"], "hidden_size": 1024, "intermediate_size": 2048,
        "num_hidden_layers": 4, "full_attention_interval": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 1000, "torch_dtype": "bfloat16",
        "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 64,
        "linear_value_head_dim": 64,
    }
    facts = facts_from_config(config)
    assert facts.linear is not None and facts.layers.count("linear") == 3
    sized = estimated_weight_bytes(config, facts).total
    unsized = estimated_weight_bytes(config, replace(facts, linear=replace(facts.linear, projection_width=0))).total
    width = 2 * 256 + 3 * 512 + 2 * 8
    assert sized - unsized == (width - 4 * 1024) * 1024 * 3 * 2  # three mixers, two bytes a weight


def test_kimi_delta_attention_projects_qkvo_the_low_rank_gates_and_beta():
    # 32 heads of 128 on a 2304-wide stream (Kimi-Linear-48B's sizes): q, k, v, o (4 x 4096), the gates'
    # first halves (2 x 128) and beta (32) hidden-wide; the gates' second halves, 2 x 128 x 4096 weights,
    # in whole 2304-wide columns (455)
    config = {"hidden_size": 2304, "linear_attn_config": {"kda_layers": [1, 2, 3], "num_heads": 32, "head_dim": 128,
                                                          "short_conv_kernel_size": 4}}
    found = linear_from_config(config, 32, 128)
    assert found is not None and found.mixer == "kda"
    assert found.projection_width == 4 * 4096 + 2 * 128 + 32 + 455
    assert abs(found.projection_width * 2304 - (4 * 4096 * 2304 + 2 * 128 * 2304 + 32 * 2304 + 2 * 128 * 4096)) < 2304


NEMOTRON_H = {
    # the block layout of a Nemotron-H config (hybrid_override_pattern: M Mamba-2, * attention, - MLP)
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 1024,
    "num_hidden_layers": 6, "hybrid_override_pattern": "M-M*-M", "intermediate_size": 4096,
    "mlp_hidden_act": "relu2", "mamba_num_heads": 32, "mamba_head_dim": 64, "ssm_state_size": 128,
    "n_groups": 8, "conv_kernel": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
    "vocab_size": 1000, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}


def test_split_blocks_hold_a_mixer_or_an_ungated_mlp_never_both():
    facts = facts_from_config(NEMOTRON_H)
    assert facts.split_blocks and facts.mlp_projections == 2
    assert [facts.holds_mlp(i) for i in range(6)] == [False, True, False, False, True, False]
    mamba = 1024 * (3 * 32 * 64 + 2 * 8 * 128 + 32)  # in_proj (gate, x, B, C, dt) and out_proj
    attention = 1024 * 8 * 128 * 2 + 1024 * 2 * 128 * 2  # q, o and k, v
    mlp = 2 * 1024 * 4096  # up and down (squared ReLU, no gate)
    embeddings = 2 * 1000 * 1024
    params = 3 * mamba + attention + 2 * mlp + embeddings
    assert estimated_weight_bytes(NEMOTRON_H, facts).total == params * 2


def test_a_split_block_moe_counts_experts_in_its_moe_blocks_only():
    config = {**NEMOTRON_H, "hybrid_override_pattern": "MEM*EM", "n_routed_experts": 8,
              "num_experts_per_tok": 2, "moe_intermediate_size": 512, "n_shared_experts": 1,
              "moe_shared_expert_intermediate_size": 1024}
    facts = facts_from_config(config)
    assert facts.expert_layers() == 2
    assert expert_params(facts) == 2 * 8 * 2 * 1024 * 512
    # one shared expert twice a routed expert's width counts as two routed widths
    assert facts.moe is not None and facts.moe.shared_experts == 2
    mamba = 1024 * (3 * 32 * 64 + 2 * 8 * 128 + 32)
    attention = 1024 * 8 * 128 * 2 + 1024 * 2 * 128 * 2
    moe_block = (8 + 2) * 2 * 1024 * 512 + 1024 * 8  # routed and shared (up, down) and the router
    params = 3 * mamba + attention + 2 * moe_block + 2 * 1000 * 1024
    assert estimated_weight_bytes(config, facts).total == params * 2


def test_blocks_named_in_layers_block_type_give_the_layout_and_the_layer_count():
    # newer Nemotron configs list the blocks by name and may leave num_hidden_layers out
    config = {**NEMOTRON_H, "hybrid_override_pattern": None, "num_hidden_layers": None,
              "layers_block_type": ["mamba", "mlp", "mamba", "attention", "mlp", "mamba"]}
    facts = facts_from_config(config)
    assert facts.num_layers == 6 and facts.split_blocks
    assert estimated_weight_bytes(config, facts).total == estimated_weight_bytes(NEMOTRON_H, facts_from_config(NEMOTRON_H)).total


def test_a_latent_moe_sizes_its_experts_at_the_latent_width():
    # Nemotron-3's LatentMoE: the experts read and write moe_latent_size; two projections per layer
    # move the token into it and back; the router and the shared expert stay at the hidden size
    config = {**NEMOTRON_H, "hybrid_override_pattern": "MEM*EM", "n_routed_experts": 8, "num_experts_per_tok": 2,
              "moe_intermediate_size": 512, "n_shared_experts": 1, "moe_shared_expert_intermediate_size": 512,
              "moe_latent_size": 256}
    facts = facts_from_config(config)
    assert facts.expert_width == 256
    assert expert_params(facts) == 2 * 8 * 2 * 256 * 512
    mamba = 1024 * (3 * 32 * 64 + 2 * 8 * 128 + 32)
    attention = 1024 * 8 * 128 * 2 + 1024 * 2 * 128 * 2
    moe_block = 8 * 2 * 256 * 512 + 2 * 1024 * 256 + 2 * 1024 * 512 + 1024 * 8  # experts, latent in/out, shared, router
    params = 3 * mamba + attention + 2 * moe_block + 2 * 1000 * 1024
    assert estimated_weight_bytes(config, facts).total == params * 2


def test_deepseek_mtp_layers_carry_their_own_embedding_and_head():
    # deepseek_mtp.py: the MTP predictor's embed_tokens and SharedHead.head are checkpoint tensors
    config = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 256,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 64,
              "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32, "intermediate_size": 512,
              "vocab_size": 1000, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16"}
    with_mtp = estimated_weight_bytes(config, facts_from_config(config)).mtp
    other = {**config, "architectures": ["SomeOtherForCausalLM"]}
    assert with_mtp - estimated_weight_bytes(other, facts_from_config(other)).mtp == 2 * 1000 * 256 * 2
