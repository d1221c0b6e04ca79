"""The vision tower read from a config.json's vision_config, and its parameter count."""

from __future__ import annotations

from servekit.facts import shipped_facts
from servekit.facts.config import facts_from_config
from servekit.facts.model import ModelFacts, VisionFacts
from servekit.facts.vision import vision_from_config, vision_params

TEXT = {"num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
        "hidden_size": 512}
QWEN35_VISION = {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "num_heads": 16, "patch_size": 16,
                 "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3, "out_hidden_size": 5120,
                 "hidden_act": "gelu_pytorch_tanh"}


def test_qwen_vl_tower_takes_any_image_size():
    vision = vision_from_config({"text_config": TEXT, "vision_config": QWEN35_VISION})
    assert vision == VisionFacts(width=1152, intermediate=4304, depth=27, patch_size=16, temporal_patch_size=2,
                                 merge=2, out_width=5120)
    assert vision.pixels_per_patch == 3 * 2 * 16 * 16 and vision.image_size is None


def test_qwen2_vl_names_the_width_embed_dim_and_the_output_hidden_size():
    vision = vision_from_config({"vision_config": {"depth": 32, "embed_dim": 1280, "hidden_size": 3584,
                                                   "mlp_ratio": 4, "patch_size": 14, "spatial_merge_size": 2,
                                                   "temporal_patch_size": 2}})
    assert (vision.width, vision.intermediate, vision.out_width) == (1280, 5120, 3584)


def test_silu_towers_have_a_gated_mlp_with_three_projections():
    config = {"vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "hidden_act": "silu",
                                "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
                                "temporal_patch_size": 2}}
    vision = vision_from_config(config)
    assert vision.gated_mlp
    # 676.55M parameters in the Qwen2.5-VL-7B tower (the published count)
    assert abs(vision_params(vision, 3584) - 676_550_000) / 676_550_000 < 0.01


def test_fixed_resolution_tower_with_stated_tokens_per_image():
    config = {"mm_tokens_per_image": 256, "vision_config": {"hidden_size": 1152, "intermediate_size": 4304,
                                                            "num_hidden_layers": 27, "image_size": 896,
                                                            "patch_size": 14}}
    vision = vision_from_config(config)
    assert (vision.image_size, vision.tokens_per_image, vision.patch_size, vision.merge) == (896, 256, 14, 1)


def test_merge_from_the_top_level_or_a_pixel_shuffle_ratio():
    mistral = {"spatial_merge_size": 2, "vision_config": {"hidden_size": 1024, "intermediate_size": 4096,
                                                          "num_hidden_layers": 24, "image_size": 1540}}
    llama4 = {"vision_config": {"hidden_size": 1408, "intermediate_size": 5632, "num_hidden_layers": 34,
                                "image_size": 336, "pixel_shuffle_ratio": 0.5}}
    assert vision_from_config(mistral).merge == 2 and vision_from_config(llama4).merge == 2


def test_no_or_unreadable_vision_config_gives_none():
    assert vision_from_config(TEXT) is None
    assert vision_from_config({"vision_config": {"patch_size": 14}}) is None


def test_facts_carry_the_tower_and_round_trip_through_json():
    facts = facts_from_config({"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": TEXT,
                               "vision_config": QWEN35_VISION})
    assert facts.has_vision and facts.vision is not None and facts.vision.width == 1152
    assert ModelFacts.from_json(facts.to_json()) == facts


def test_qwen35_tower_parameter_count_prices_the_shipped_vision_share():
    facts = shipped_facts("Qwen/Qwen3.8-27B")
    assert facts.vision is not None and facts.weights is not None
    assert facts.weights.vision == vision_params(facts.vision, facts.hidden_size) * 2
    assert "vision" in facts.weights.estimated
