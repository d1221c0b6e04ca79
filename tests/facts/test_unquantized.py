"""The quantization config's lists of modules left unquantized (``ignore``, ``exclude_modules``,
``modules_to_not_convert``) price those parts at the model dtype when weights are estimated from
config.json (servekit.facts.unquantized)."""

from __future__ import annotations

import pytest

from servekit.errors import ServekitError
from servekit.facts.config import facts_from_config
from servekit.facts.estimate import estimated_weight_bytes
from servekit.facts.quant_bytes import format_from_config, format_from_point
from servekit.facts.unquantized import is_unquantized, part_of, unquantized_from_config
from servekit.fit.point_fields import normalized_point

MOE_CONFIG = {
    "architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 5632,
    "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 1408, "num_hidden_layers": 4,
    "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 128, "num_experts": 60,
    "num_experts_per_tok": 4, "vocab_size": 1000, "torch_dtype": "bfloat16",
}
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4"}


@pytest.mark.parametrize("name,part", [
    ("model.layers.*.self_attn*", "attention"),
    ("re:.*self_attn.q_proj$", "attention"),
    ("model.layers.*.linear_attn*", "linear_attention"),
    ("re:.*mlp.gate$", "router"),
    ("model.layers.3.mlp.shared_expert_gate", "router"),
    ("model.layers.*.mlp.shared_expert.*", "shared_experts"),
    ("model.layers.0.mlp.experts.1.down_proj", "experts"),
    ("model.layers.0.mlp", "mlp"),
    ("mtp*", "mtp"),
    ("lm_head", None),
    ("model.visual*", None),
    ("model.layers.0.mlp.gate_up_proj", "mlp"),
])
def test_module_names_map_to_parts(name, part):
    assert part_of(name) == part


def test_config_lists_are_read_from_every_key():
    q = {"quant_method": "awq", "bits": 4, "modules_to_not_convert": ["model.layers.2.self_attn"],
         "ignore": ["re:.*mlp.gate$"], "quantization": {"exclude_modules": ["mtp*"]}}
    found = unquantized_from_config(q)
    assert ("attention", 2) in found and ("router", None) in found and ("mtp", None) in found
    assert is_unquantized(found, "attention", 2) and not is_unquantized(found, "attention", 1)
    # a listed MLP holds the layer's experts, shared experts and router
    assert is_unquantized((("mlp", 0),), "experts", 0) and not is_unquantized((("mlp", 0),), "experts", 1)


def test_unquantized_parts_raise_the_estimate_by_their_dtype_bytes():
    facts = facts_from_config(MOE_CONFIG)
    plain = estimated_weight_bytes({**MOE_CONFIG, "quantization_config": NVFP4}, facts).total
    left = {**NVFP4, "exclude_modules": ["model.layers.*.self_attn*"]}
    with_list = estimated_weight_bytes({**MOE_CONFIG, "quantization_config": left}, facts).total
    attention = 4 * (2048 * 16 * 128 * 2 + 2048 * 16 * 128 * 2)  # q, o and k, v over four layers
    assert with_list - plain == pytest.approx(attention * (2.0 - (0.5 + 1 / 16)), rel=1e-6)
    # one layer named: a quarter of that
    one = {**NVFP4, "exclude_modules": ["model.layers.1.self_attn"]}
    assert estimated_weight_bytes({**MOE_CONFIG, "quantization_config": one}, facts).total - plain == \
        pytest.approx(attention / 4 * (2.0 - 0.5625), rel=1e-6)
    # entries outside the decoder (lm_head, the tower) change nothing: already at the dtype
    outside = {**NVFP4, "exclude_modules": ["lm_head", "model.visual*"]}
    assert estimated_weight_bytes({**MOE_CONFIG, "quantization_config": outside}, facts).total == plain


def test_the_points_structured_field_takes_parts_only():
    fmt = format_from_point({"method": "nvfp4", "bits": 4, "unquantized": ["attention", "router"]})
    assert fmt.unquantized == (("attention", None), ("router", None))
    assert format_from_config(NVFP4).unquantized == ()
    good = normalized_point({"quantization": {"method": "nvfp4", "bits": 4, "unquantized": ["linear_attention"]}})
    assert good["quantization"]["unquantized"] == ["linear_attention"]
    with pytest.raises(ServekitError, match="quantization.unquantized"):
        normalized_point({"quantization": {"method": "nvfp4", "bits": 4, "unquantized": ["self_attn*"]}})
