"""Layer layouts and KV heads that families state under their own keys, read as vLLM's model code
reads them."""

from __future__ import annotations

from servekit.facts.config import facts_from_config
from servekit.fit.kv import attention_token_bytes, linear_state_bytes


def test_step3p5_kv_heads_are_its_attention_groups():
    # step3p5.py sizes the KV heads from num_attention_groups; the config has no num_key_value_heads
    config = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 1024,
              "num_hidden_layers": 4, "num_attention_heads": 16, "num_attention_groups": 2, "head_dim": 128,
              "sliding_window": 512, "vocab_size": 100,
              "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                              "full_attention"]}  # one more entry for the MTP layer
    facts = facts_from_config(config)
    assert facts.num_kv_heads == 2 and facts.layers == ("full", "sliding", "sliding", "sliding")
    assert attention_token_bytes(facts, "full", 2, 1) == 2 * 2 * 128 * 2


KIMI_LINEAR = {
    # Kimi-Linear: MLA layers among Kimi Delta Attention ones, named from 1 in linear_attn_config
    "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8, "kv_lora_rank": 512,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 100,
    "linear_attn_config": {"kda_layers": [1, 2, 3], "full_attn_layers": [4], "num_heads": 8, "head_dim": 128,
                           "short_conv_kernel_size": 4},
}


def test_kimi_delta_attention_layers_hold_a_state_and_the_rest_mla():
    facts = facts_from_config(KIMI_LINEAR)
    assert facts.layers == ("linear", "linear", "linear", "mla")
    assert facts.linear is not None and facts.linear.mixer == "kda"
    # short convolutions over q, k, v (kernel - 1 steps, model dtype) and a float32 head_dim^2 state per head
    conv = 3 * 8 * 128 * 3 * 2
    recurrent = 8 * 128 * 128 * 4
    assert linear_state_bytes(facts, 1) == conv + recurrent
    assert linear_state_bytes(facts, 2) == conv // 2 + recurrent // 2
    assert attention_token_bytes(facts, "mla", 2, 1) == (512 + 64) * 2


def test_a_kv_point_reads_kimi_delta_attention_layers_too():
    from servekit.fit.points import facts_from_point

    point_facts, _ = facts_from_point(KIMI_LINEAR)
    assert point_facts.layers == facts_from_config(KIMI_LINEAR).layers
    assert point_facts.linear == facts_from_config(KIMI_LINEAR).linear


BAILING = {
    "model_type": "bailing_hybrid", "hidden_size": 1024, "num_hidden_layers": 14, "num_attention_heads": 8,
    "num_key_value_heads": 8, "head_dim": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    "v_head_dim": 128, "layer_group_size": 4, "vocab_size": 100, "torch_dtype": "bfloat16",
}


def test_ling_2_5_runs_lightning_attention_between_its_mla_layers():
    # bailing_moe_linear.py: linear unless (i + 1) is a multiple of layer_group_size
    facts = facts_from_config({**BAILING, "architectures": ["BailingMoeV2_5ForCausalLM"]})
    assert [i for i, kind in enumerate(facts.layers) if kind == "mla"] == [3, 7, 11]
    assert facts.linear is not None and facts.linear.mixer == "lightning"
    assert linear_state_bytes(facts, 1) == 8 * 128 * 128 * 2  # the model dtype


def test_ling_3_runs_kda_and_keeps_the_layers_past_the_last_group_as_mla():
    # bailing_moe_v3.py _is_kda_layer: MLA at (i + 1) % group == 0 and from num_layers // group * group on
    facts = facts_from_config({**BAILING, "architectures": ["BailingMoeV3ForCausalLM"], "short_conv_kernel_size": 4})
    assert [i for i, kind in enumerate(facts.layers) if kind == "mla"] == [3, 7, 11, 12, 13]
    assert facts.linear is not None and facts.linear.mixer == "kda"
    assert linear_state_bytes(facts, 1) == 3 * 8 * 128 * 3 * 2 + 8 * 128 * 128 * 4


def test_layer_group_size_means_nothing_to_other_architectures():
    facts = facts_from_config({**BAILING, "architectures": ["BailingMoeV2ForCausalLM"]})
    assert facts.layers == ("mla",) * 14 and facts.linear is None
