"""The multimodal encoder's share of the start-up profile (servekit.fit.encoder)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts import shipped_facts
from servekit.facts.model import VisionFacts
from servekit.fit.encoder import encoder_profile, fallback_tower, item_shape, items_per_batch, tower
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import LaunchSettings
from servekit.fit.memory import activation_gib, encoder_gib, sampler_gib

GIB = 1 << 30
QWEN35 = VisionFacts(width=1152, intermediate=4304, depth=27, patch_size=16, temporal_patch_size=2, merge=2,
                     out_width=5120)
SIGLIP = VisionFacts(width=1152, intermediate=4304, depth=27, patch_size=14, merge=4, image_size=896,
                     tokens_per_image=256)
H100 = device_from_profile("h100", {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 1, "vram_gb": 80})
RTX_5090 = device_from_profile("rtx_5090", {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1,
                                            "vram_gb": 32})


def test_a_tower_of_any_image_size_is_profiled_with_the_processors_largest_image():
    # start-up logs of Qwen3.5/3.6/3.8 launches: "Encoder cache will be initialized with a budget of
    # 16384 tokens, and profiled with 1 image items of the maximum feature size"
    assert item_shape(QWEN35) == (16384, 16384 * 4)
    assert items_per_batch(16384, batched=2048, max_num_seqs=256, max_model_len=32768) == 1
    assert items_per_batch(16384, batched=8192, max_num_seqs=2, max_model_len=262144) == 1


def test_a_fixed_resolution_tower_fills_the_encoder_budget_with_items():
    assert item_shape(SIGLIP) == (256, 64 * 64)
    assert items_per_batch(256, batched=8192, max_num_seqs=1024, max_model_len=131072) == 32
    # at most max_num_seqs x items per prompt, and a prompt holds at most max_model_len / tokens items
    assert items_per_batch(256, batched=8192, max_num_seqs=2, max_model_len=512) == 4
    assert items_per_batch(1024, batched=512, max_num_seqs=1, max_model_len=512) == 1


def test_the_towers_peak_and_what_it_keeps():
    profile = encoder_profile(QWEN35, lm_hidden=5120, act_bytes=2, tp=1, batched=8192, max_num_seqs=2,
                              max_model_len=262144)
    patches = 65536
    assert profile.transient_gib * GIB == pytest.approx(patches * (1536 + 3 * 1152 + 2 * 4304) * 2)
    assert profile.kept_gib * GIB == pytest.approx((16384 * 5120 + patches * 1536) * 2)
    split = encoder_profile(QWEN35, lm_hidden=5120, act_bytes=2, tp=2, batched=8192, max_num_seqs=2,
                            max_model_len=262144)
    assert split.transient_gib * GIB == pytest.approx(patches * (1536 + 3 * 1152 + 4304) * 2)
    gated = encoder_profile(replace(QWEN35, gated_mlp=True), lm_hidden=5120, act_bytes=2, tp=1, batched=8192,
                            max_num_seqs=2, max_model_len=262144)
    assert (gated.transient_gib - profile.transient_gib) * GIB == pytest.approx(patches * 4304 * 2)


def test_deepstack_levels_multiply_the_kept_outputs():
    deep = encoder_profile(replace(QWEN35, deepstack_levels=3), lm_hidden=5120, act_bytes=2, tp=1, batched=8192,
                           max_num_seqs=2, max_model_len=262144)
    assert deep.kept_gib * GIB == pytest.approx((16384 * 5120 * 4 + 65536 * 1536) * 2)


def test_few_sequences_leave_the_encoder_as_the_profile_peak():
    facts = shipped_facts("Inferact/Qwen3.8-27B-NVFP4")
    launch = LaunchSettings(max_model_len=32768, max_num_seqs=8, enforce_eager=True)
    encoder = encoder_gib(facts, launch, RTX_5090)
    assert encoder is not None and activation_gib(facts, launch, RTX_5090) == encoder.transient_gib


def test_outputs_stay_in_the_encoder_cache_while_the_sampler_runs():
    facts = shipped_facts("Inferact/Qwen3.8-27B-NVFP4")
    launch = LaunchSettings(max_model_len=32768, max_num_seqs=1024, max_num_batched_tokens=8192)
    encoder = encoder_gib(facts, launch, H100)
    sampler = sampler_gib(facts, launch, H100, "0.26.1")
    assert sampler > encoder.transient_gib
    assert activation_gib(facts, launch, H100, "0.26.1") == pytest.approx(encoder.kept_gib + sampler)


def test_no_encoder_term_without_media_or_vision():
    facts = shipped_facts("Inferact/Qwen3.8-27B-NVFP4")
    assert encoder_gib(facts, LaunchSettings(language_model_only=True), H100) is None
    assert encoder_gib(shipped_facts("meta-llama/Llama-3.1-8B-Instruct"), LaunchSettings(), H100) is None


def test_multimodal_facts_without_a_tower_get_the_assumed_one():
    facts = replace(shipped_facts("Inferact/Qwen3.8-27B-NVFP4"), vision=None)
    assert tower(facts) == fallback_tower()
    assert item_shape(fallback_tower()) == item_shape(QWEN35)
    assert tower(replace(facts, has_vision=False)) is None
