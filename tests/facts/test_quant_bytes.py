"""Quantized weight bytes from a checkpoint's quantization config (servekit.facts.quant_bytes),
used when no safetensors header gives exact bytes, and marked estimated where a point uses them."""

from __future__ import annotations

import pytest

from servekit.facts.estimate import estimated_weight_bytes, linear_weight_bytes
from servekit.facts.quant_bytes import (
    DEFAULT_GROUP_SIZE,
    QuantFormat,
    bytes_per_weight,
    format_from_config,
    format_from_point,
)
from servekit.fit.points import facts_from_point, predict_point


@pytest.mark.parametrize("config,expected", [
    # AWQ: 4-bit data, a float16 scale and a 4-bit zero point per 128 weights (awq.py create_weights)
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}, 0.5 + 2.5 / 128),
    # GPTQ keeps qzeros even when symmetric (gptq.py create_weights)
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True}, 0.5 + 2.5 / 128),
    ({"quant_method": "gptq", "bits": 8, "group_size": 32}, 1.0 + 3.0 / 32),
    # block-scaled FP8: one float32 per 128 x 128 block (fp8.py weight_scale_inv)
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, 1.0 + 4 / (128 * 128)),
    ({"quant_method": "fp8"}, 1.0),
    # NVFP4: one fp8 scale per 16 weights (modelopt.py); MXFP4: one uint8 scale per 32 (mxfp4.py)
    ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, 0.5 + 1 / 16),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}, 1.0),
    ({"quant_method": "mxfp4"}, 0.5 + 1 / 32),
    # compressed-tensors: symmetric W4A16 keeps only the scale; W8A8 int8 per channel; NVFP4 as float 4
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 128}}}}, 0.5 + 2 / 128),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 4, "type": "int", "symmetric": False, "strategy": "group", "group_size": 32}}}}, 0.5 + 2.5 / 32),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel"}}}}, 1.0),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 4, "type": "float", "group_size": 16}}}}, 0.5 + 1 / 16),
])
def test_bytes_per_weight_follow_each_methods_layout(config, expected):
    fmt = format_from_config(config)
    assert fmt is not None
    assert bytes_per_weight(fmt) == pytest.approx(expected)
    assert linear_weight_bytes({"quantization_config": config}, 2.0) == pytest.approx(expected)


def test_smaller_groups_cost_more_scale_bytes():
    coarse = bytes_per_weight(QuantFormat("int4", 4, group_size=128, zero_point=True))
    fine = bytes_per_weight(QuantFormat("int4", 4, group_size=32, zero_point=True))
    assert fine - 0.5 == pytest.approx(4 * (coarse - 0.5))


def test_an_unknown_method_keeps_the_dtype():
    assert format_from_config({"quant_method": "mystery"}) is None
    assert linear_weight_bytes({"quantization_config": {"quant_method": "mystery"}}, 2.0) == 2.0


def test_a_points_int4_without_group_size_takes_the_default_group():
    fmt = format_from_point({"method": "int4", "bits": 4})
    assert fmt.group_size == DEFAULT_GROUP_SIZE and fmt.zero_point
    assert format_from_point({"method": "int4", "bits": 4, "group_size": 32}).group_size == 32


CONFIG = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
          "hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 128256}


def test_an_estimate_prices_its_linears_by_the_stated_format():
    facts, _ = facts_from_point(CONFIG)
    bf16 = estimated_weight_bytes(CONFIG, facts)
    fp8 = estimated_weight_bytes(CONFIG, facts, format_from_point({"method": "fp8", "bits": 8}))
    int4 = estimated_weight_bytes(CONFIG, facts, format_from_point({"method": "int4", "bits": 4}))
    embeddings = 2 * 128256 * 4096 * 2
    assert (fp8.total - embeddings) == pytest.approx((bf16.total - embeddings) / 2, rel=1e-6)
    assert int4.total < fp8.total < bf16.total and not int4.exact


def _line(**extra):
    return {"model": "test/llama-8b", "config_facts": dict(CONFIG), "gpu_model": "h100", "tp": 1,
            "gpu_memory_utilization": 0.9, "max_model_len": 8192, "vllm_version": "0.19.0", **extra}


def test_a_point_without_weights_is_estimated_from_its_quantization_and_says_so():
    plain = predict_point(_line(), use_logged_memory=False)
    quantized = predict_point(_line(quantization={"method": "int4", "bits": 4}), use_logged_memory=False)
    assert quantized["weights_estimated"] is True
    assert quantized["weights_basis"] == "estimated from config_facts, linears as int4 (4 bits)"
    assert quantized["weights_gib_per_rank"] < plain["weights_gib_per_rank"] / 2.5
    assert quantized["kv_tokens"] > plain["kv_tokens"]


def test_a_config_quantization_config_wins_over_the_points_field():
    stated = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    line = _line(quantization={"method": "int4", "bits": 4})
    line["config_facts"]["quantization_config"] = stated
    result = predict_point(line, use_logged_memory=False)
    assert result["weights_basis"] == "estimated from config_facts"
    fp8_only = predict_point({**_line(), "config_facts": {**CONFIG, "quantization_config": stated}},
                             use_logged_memory=False)
    assert result["weights_gib_per_rank"] == fp8_only["weights_gib_per_rank"]
