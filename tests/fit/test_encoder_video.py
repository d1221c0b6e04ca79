"""The encoder budget when video and several items are profiled (servekit.fit.encoder), as vLLM's
MultiModalBudget and the Qwen-VL processing info size them (vllm/multimodal/encoder_budget.py,
vllm/model_executor/models/qwen2_vl.py and qwen3_vl.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts.model import VisionFacts
from servekit.fit.encoder import (
    QWEN2_VL_MAX_FRAMES,
    encoder_profile,
    item_shape,
    modality_items,
    takes_video,
    video_frames,
)
from servekit.fit.launch import LaunchArgsError, launch_settings
from servekit.fit.points import predict_point

QWEN3_VL = VisionFacts(width=1152, intermediate=4304, depth=27, patch_size=16, temporal_patch_size=2, merge=2,
                       out_width=2048, deepstack_levels=3)
QWEN2_VL = replace(QWEN3_VL, patch_size=14, deepstack_levels=0, out_width=3584)
SIGLIP = VisionFacts(width=1152, intermediate=4304, depth=27, patch_size=14, merge=4, image_size=896,
                     tokens_per_image=256)
IMAGE_TOKENS = 16384


def _profile(vision=QWEN3_VL, max_model_len=65536, limits=None, batched=8192, seqs=256, tp=1):
    return encoder_profile(vision, lm_hidden=2048, act_bytes=2, tp=tp, batched=batched, max_num_seqs=seqs,
                           max_model_len=max_model_len, limits=limits)


def test_only_towers_of_the_qwen_vl_shape_take_video():
    assert takes_video(QWEN3_VL) and takes_video(QWEN2_VL)
    assert not takes_video(SIGLIP)
    assert set(modality_items(SIGLIP, 65536, {})) == {"image"}


def test_the_default_limit_of_999_videos_leaves_a_video_the_size_of_one_image():
    # 999 videos share the context: one frame each, one grid step, the tokens of one image; the tie
    # goes to "video" (max by (tokens, name)) and the Qwen3-VL dummy video has two frames: one step
    assert video_frames(QWEN3_VL, 262144, 999) == 1
    profile = _profile(max_model_len=262144)
    assert profile.modality == "video"
    assert (profile.tokens_per_item, profile.patches_per_item) == item_shape(QWEN3_VL)
    images_only = _profile(max_model_len=262144, limits={"video": 0})
    assert images_only.modality == "image"
    assert images_only.transient_gib == profile.transient_gib and images_only.kept_gib == profile.kept_gib


def test_one_video_per_prompt_fills_the_context_with_frames():
    # frames counted up from two while ceil(frames / 2) grid steps x 16,384 tokens fit 65,536
    assert video_frames(QWEN3_VL, 65536, 1) == 8
    profile = _profile(limits={"video": 1})
    assert profile.modality == "video"
    assert profile.tokens_per_item == 4 * IMAGE_TOKENS
    assert profile.budget_tokens == 4 * IMAGE_TOKENS  # 'a budget of 65536 tokens', above the 8192 batched
    assert profile.items == 1
    assert profile.patches_per_item == 4 * item_shape(QWEN3_VL)[1]


def test_doubling_the_video_frames_doubles_the_encoder_budget_and_its_memory():
    short, long = _profile(max_model_len=65536, limits={"video": 1}), _profile(max_model_len=131072,
                                                                               limits={"video": 1})
    assert video_frames(QWEN3_VL, 131072, 1) == 2 * video_frames(QWEN3_VL, 65536, 1)
    assert long.budget_tokens == 2 * short.budget_tokens
    assert long.transient_gib == pytest.approx(2 * short.transient_gib)
    assert long.kept_gib == pytest.approx(2 * short.kept_gib)
    image = _profile(max_model_len=131072, limits={"video": 0})
    assert long.transient_gib > image.transient_gib


def test_a_video_limit_shares_the_frames():
    assert video_frames(QWEN3_VL, 131072, 2) == video_frames(QWEN3_VL, 131072, 1) // 2
    two = _profile(max_model_len=131072, limits={"video": 2})
    one = _profile(max_model_len=131072, limits={"video": 1})
    assert two.tokens_per_item == one.tokens_per_item // 2
    # the budget is the largest item of this launch (compute_mm_encoder_budget), the shorter video
    assert two.items == 1 and two.budget_tokens == two.tokens_per_item
    assert two.transient_gib == pytest.approx(one.transient_gib / 2)


def test_qwen2_vl_caps_the_frames_of_a_video():
    assert video_frames(QWEN2_VL, 10**7, 1) == QWEN2_VL_MAX_FRAMES
    tokens, _ = item_shape(QWEN2_VL)
    assert modality_items(QWEN2_VL, 10**7, {"video": 1})["video"][0] == QWEN2_VL_MAX_FRAMES // 2 * tokens


def test_several_small_items_fill_the_budget_up_to_the_prompts_limit():
    # 256-token images: 8192 // 256 = 32 fit the budget; two sequences of at most 3 images hold 6
    assert _profile(SIGLIP, max_model_len=131072, seqs=1024).items == 32
    assert _profile(SIGLIP, max_model_len=131072, seqs=2, limits={"image": 3}).items == 6


def test_no_modality_allowed_means_no_encoder_profile():
    assert _profile(limits={"image": 0, "video": 0}) is None


@pytest.mark.parametrize("raw,expected", [
    ('{"image": 2, "video": 1}', (("image", 2), ("video", 1))),
    ('{"video": {"count": 1, "num_frames": 8}}', (("video", 1),)),
    ("image=2,video=0", (("image", 2), ("video", 0))),
])
def test_limit_mm_per_prompt_is_read_per_modality(raw, expected):
    assert launch_settings(["--limit-mm-per-prompt", raw]).mm_limits == expected


def test_no_media_at_all_skips_the_tower_and_a_bad_limit_is_named():
    assert launch_settings(["--limit-mm-per-prompt", '{"image": 0, "video": 0}']).language_model_only
    assert not launch_settings(["--limit-mm-per-prompt", '{"image": 0, "video": 1}']).language_model_only
    assert not launch_settings(["--limit-mm-per-prompt", '{"video": 0}']).language_model_only
    with pytest.raises(LaunchArgsError, match="--limit-mm-per-prompt"):
        launch_settings(["--limit-mm-per-prompt", '{"video": "many"}'])


def _line(flags):
    facts = {"num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
             "hidden_size": 2048, "intermediate_size": 6144, "vocab_size": 151936, "multimodal": True,
             "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "depth": 27, "patch_size": 16,
                               "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 2048,
                               "deepstack_visual_indexes": [8, 16, 24]}}
    return {"model": "test/qwen3-vl", "config_facts": facts, "gpu_model": "rtx_3090", "tp": 4,
            "weights_gib": 57.0, "gpu_memory_utilization": 0.9, "max_model_len": 65536, "vllm_version": "0.19.0",
            "extra_flags": flags}


def test_a_launch_that_allows_one_long_video_plans_a_smaller_pool():
    images = predict_point(_line(["--limit-mm-per-prompt '{\"video\": 0}'"]), use_logged_memory=False)
    video = predict_point(_line(["--limit-mm-per-prompt '{\"video\": 1}'"]), use_logged_memory=False)
    default = predict_point(_line([]), use_logged_memory=False)
    assert default["kv_tokens"] == images["kv_tokens"]
    assert video["kv_tokens"] < images["kv_tokens"]


def test_the_dotted_form_sets_one_modality_at_a_time():
    settings = launch_settings(["--limit-mm-per-prompt.video", "0", "--limit-mm-per-prompt.image", "0"])
    assert dict(settings.mm_limits) == {"video": 0, "image": 0} and settings.language_model_only
    assert not launch_settings(["--limit-mm-per-prompt.video", "0"]).language_model_only
