"""config.json -> ModelFacts: layer kinds, text_config of multimodal models, MoE, MLA, quantization."""

from __future__ import annotations

import pytest

from servekit.facts.config import ConfigFactsError, facts_from_config


def _base(**extra):
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "torch_dtype": "bfloat16",
    }
    cfg.update(extra)
    return cfg


def test_dense_gqa_defaults_head_dim_from_hidden_size():
    facts = facts_from_config(_base())
    assert facts.layer_counts() == {"full": 32}
    assert (facts.num_attention_heads, facts.num_kv_heads, facts.head_dim) == (32, 8, 128)
    assert facts.architecture == "LlamaForCausalLM" and facts.dtype == "bfloat16"


def test_text_config_of_a_multimodal_model_wins_and_vision_is_noticed():
    cfg = {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_5",
        "vision_config": {"depth": 27},
        "text_config": {
            "hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4,
            "head_dim": 256, "full_attention_interval": 4, "linear_num_key_heads": 16,
            "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
            "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32", "mtp_num_hidden_layers": 1,
            "vocab_size": 248320, "dtype": "bfloat16",
        },
    }
    facts = facts_from_config(cfg)
    assert facts.layer_counts() == {"linear": 48, "full": 16}
    assert facts.layers[3] == "full" and facts.layers[0] == "linear"
    assert facts.linear.state_heads == 48 and facts.linear.split_heads == (16, 48)
    assert facts.linear.conv_channels == 2 * 16 * 128 + 48 * 128 and facts.linear.state_dtype == "float32"
    assert facts.mtp_layers == 1 and facts.has_vision and facts.vocab_size == 248320


def test_layer_types_list_is_read_as_given():
    types = ["sliding_attention", "full_attention"] * 3
    facts = facts_from_config(_base(num_hidden_layers=6, layer_types=types, sliding_window=128))
    assert facts.layers == ("sliding", "full") * 3
    assert facts.sliding_window == 128


def test_sliding_window_pattern_makes_every_nth_layer_global():
    facts = facts_from_config(_base(num_hidden_layers=48, sliding_window=1024, sliding_window_pattern=6))
    assert facts.layer_counts() == {"sliding": 40, "full": 8}
    assert facts.layers[5] == "full"


def test_sliding_window_switched_off_means_full_attention():
    facts = facts_from_config(_base(sliding_window=131072, use_sliding_window=False, max_window_layers=28))
    assert facts.layer_counts() == {"full": 32} and facts.sliding_window is None


def test_global_sliding_window_applies_to_all_layers():
    facts = facts_from_config(_base(sliding_window=4096))
    assert facts.layer_counts() == {"sliding": 32} and facts.sliding_window == 4096


def test_mla_moe_config():
    cfg = _base(
        num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128, kv_lora_rank=512,
        qk_rope_head_dim=64, n_routed_experts=256, num_experts_per_tok=8, moe_intermediate_size=2048,
        n_shared_experts=1, first_k_dense_replace=3, num_nextn_predict_layers=1,
        quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]},
    )
    facts = facts_from_config(cfg)
    assert facts.layer_counts() == {"mla": 61}
    assert (facts.mla.kv_lora_rank, facts.mla.qk_rope_head_dim) == (512, 64)
    assert facts.moe.num_experts == 256 and facts.moe.moe_intermediate_size == 2048
    assert facts.moe.dense_layers == 3 and facts.mtp_layers == 1
    assert facts.quantization.method == "fp8" and facts.quantization.weight_block_size == (128, 128)


def test_missing_keys_raise_a_servekit_error_naming_the_source():
    with pytest.raises(ConfigFactsError, match="my/config.json"):
        facts_from_config({"model_type": "whisper"}, source="my/config.json")


def test_unknown_layer_type_is_an_error():
    with pytest.raises(ConfigFactsError, match="unknown layer type"):
        facts_from_config(_base(num_hidden_layers=2, layer_types=["full_attention", "telepathy"]))


def test_facts_round_trip_through_json():
    facts = facts_from_config(_base(), model_id="org/name", source="here")
    from servekit.facts.model import ModelFacts

    assert ModelFacts.from_json(facts.to_json()) == facts


def test_mamba2_hybrid_pattern_with_mlp_only_layers():
    pattern = "M-M*-M-"
    facts = facts_from_config(_base(
        num_hidden_layers=len(pattern), hybrid_override_pattern=pattern, mamba_num_heads=128, mamba_head_dim=80,
        ssm_state_size=128, n_groups=8, conv_kernel=4,
    ))
    assert facts.layers == ("linear", "none", "linear", "full", "none", "linear", "none")
    lin = facts.linear
    assert lin.mixer == "mamba2" and lin.conv_channels == 128 * 80 + 2 * 8 * 128
    assert lin.state_heads == 128 and lin.state_head_elems == 80 * 128 and lin.split_heads == (128, 8)


def test_jamba_attention_period_and_mamba1_state():
    facts = facts_from_config(_base(num_hidden_layers=8, attn_layer_period=8, attn_layer_offset=4,
                                    mamba_expand=2, mamba_d_state=16, mamba_d_conv=4))
    assert facts.layers[4] == "full" and facts.layer_counts() == {"linear": 7, "full": 1}
    assert facts.linear.mixer == "mamba" and facts.linear.conv_channels == 2 * 4096


def test_short_conv_and_lightning_layers():
    lfm = facts_from_config(_base(num_hidden_layers=4, conv_L_cache=3,
                                  layer_types=["conv", "conv", "full_attention", "conv"]))
    assert lfm.layer_counts() == {"linear": 3, "full": 1}
    assert lfm.linear.mixer == "short_conv" and lfm.linear.state_heads == 0
    minimax = facts_from_config(_base(num_hidden_layers=4, attn_type_list=[0, 0, 0, 1]))
    assert minimax.layers == ("linear", "linear", "linear", "full")
    assert minimax.linear.mixer == "lightning" and minimax.linear.state_head_elems == 128 * 128


def test_chunked_local_attention_is_bounded_by_its_chunk():
    facts = facts_from_config(_base(num_hidden_layers=4, attention_chunk_size=8192, no_rope_layers=[1, 1, 1, 0]))
    assert facts.layers == ("sliding", "sliding", "sliding", "full") and facts.sliding_window == 8192


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ({"num_hidden_layers": "abc"}, "num_hidden_layers is 'abc', not a positive integer"),
        ({"num_attention_heads": 0}, "num_attention_heads is 0, not a positive integer"),
        ({"num_key_value_heads": -2}, "num_key_value_heads is -2"),
        ({"head_dim": 1.5}, "head_dim is 1.5"),
        ({"num_experts": "x"}, "a shape value cannot be read"),
    ],
)
def test_unreadable_shape_values_are_one_clear_error(edit, says):
    config = {"num_hidden_layers": 4, "num_attention_heads": 8, "hidden_size": 512, **edit}
    with pytest.raises(ConfigFactsError, match="my/config.json") as caught:
        facts_from_config(config, source="my/config.json")
    assert says in str(caught.value)


def test_integral_float_sizes_are_read_as_integers():
    facts = facts_from_config({"num_hidden_layers": 4.0, "num_attention_heads": 8, "hidden_size": 512})
    assert (facts.num_layers, facts.head_dim) == (4, 64)
