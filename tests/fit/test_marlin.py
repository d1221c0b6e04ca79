"""FP8 checkpoints on GPUs without FP8 tensor cores: the Marlin re-layout of the scales
(servekit.fit.marlin), the GPU generation a device id gives, and the format a kv-points line states."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts import shipped_facts
from servekit.facts.model import QuantFacts
from servekit.fit.hardware import custom_device
from servekit.fit.gpu_models import gpu_part
from servekit.fit.launch import LaunchSettings
from servekit.fit.marlin import fp8_weight_only, marlin_scale_gib
from servekit.fit.planner import FitRequest, plan_fit
from servekit.fit.points import predict_point, quant_from_point

LLAMA = shipped_facts("meta-llama/Llama-3.1-8B-Instruct")
FP8_BLOCK = replace(LLAMA, quantization=QuantFacts(method="fp8", weight_block_size=(128, 128)))
FP8_CHANNEL = replace(LLAMA, quantization=QuantFacts(method="compressed-tensors", algo="fp8"))
PER_ELEMENT = 2 / 128 - 4 / (128 * 128)


@pytest.mark.parametrize("model,generation", [
    ("rtx_3090", "ampere"), ("a100_40gb", "ampere"), ("a10", "ampere"), ("l40s", "ada"), ("h100", "hopper"),
    ("rtx_5090", "blackwell"), ("rtx_pro_6000", "blackwell"), ("mi300x", ""),
])
def test_generation_of_a_device_id(model, generation):
    assert gpu_part(model).generation == generation


def test_only_known_generations_without_fp8_run_it_weight_only():
    assert fp8_weight_only(custom_device(23.58, generation="ampere"))
    assert not fp8_weight_only(custom_device(23.99, generation="ada"))
    assert not fp8_weight_only(custom_device(79.19, generation="hopper"))
    assert not fp8_weight_only(custom_device(23.58))  # an unknown generation is not assumed to lack FP8
    assert not fp8_weight_only(custom_device(191.98, brand="AMD"))


def test_block_scales_relaid_per_group_add_one_and_a_half_percent():
    ampere, launch = custom_device(79.15, generation="ampere"), LaunchSettings(tp=2)
    kept = 2 * LLAMA.vocab_size * LLAMA.hidden_size * 2 / 2 / (1 << 30)  # embedding + LM head in bf16, per rank
    assert marlin_scale_gib(FP8_BLOCK, launch, ampere, 10.0) == pytest.approx((10.0 - kept) * PER_ELEMENT)
    assert marlin_scale_gib(FP8_CHANNEL, launch, ampere, 10.0) == 0.0  # per-channel scales stay one row
    assert marlin_scale_gib(LLAMA, launch, ampere, 10.0) == 0.0
    assert marlin_scale_gib(FP8_BLOCK, launch, custom_device(79.19, generation="hopper"), 10.0) == 0.0


def test_a_plan_counts_the_relaid_scales_in_the_weights_on_ampere_only():
    launch = LaunchSettings(max_model_len=8192)
    ampere = plan_fit(FitRequest(FP8_BLOCK, custom_device(79.15, generation="ampere"), launch, weights_gib_per_rank=8.0))
    hopper = plan_fit(FitRequest(FP8_BLOCK, custom_device(79.15, generation="hopper"), launch, weights_gib_per_rank=8.0))
    assert hopper.weights_gib_per_rank == 8.0
    assert ampere.weights_gib_per_rank == pytest.approx(8.0 + marlin_scale_gib(
        FP8_BLOCK, launch, custom_device(79.15, generation="ampere"), 8.0))
    assert ampere.available_kv_gib < hopper.available_kv_gib
    assert [what for what, _ in ampere.weights_added] == ["Marlin's FP8 group scales"] and hopper.weights_added == ()
    logged = plan_fit(FitRequest(FP8_BLOCK, custom_device(79.15, generation="ampere"), launch,
                                 weights_gib_per_rank=8.0, weights_as_loaded=True))
    assert logged.weights_gib_per_rank == 8.0 and logged.weights_added == ()  # the engine's own figure holds them


@pytest.mark.parametrize("quantization,block", [
    ({"method": "fp8", "bits": 8, "weight_block_size": [128, 128]}, (128, 128)),
    ({"method": "fp8", "bits": 8}, None),  # per-channel or per-tensor scales: no blocks
])
def test_fp8_format_of_a_point(quantization, block):
    quant = quant_from_point({"quantization": quantization, "config_facts": {}})
    assert quant is not None and quant.method == "fp8" and quant.weight_block_size == block


def test_other_formats_and_a_stated_quantization_config():
    assert quant_from_point({"weights_dtype": "FP8 block-scaled", "config_facts": {}}) is None  # free text
    nvfp4 = quant_from_point({"quantization": {"method": "nvfp4", "bits": 4}, "config_facts": {}})
    assert nvfp4 is not None and nvfp4.method == "nvfp4" and nvfp4.weight_block_size is None
    stated = quant_from_point({"quantization": {"method": "fp8", "bits": 8}, "config_facts": {
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [64, 64]}}})
    assert stated is not None and stated.weight_block_size == (64, 64)


POINT = {
    "model": "an FP8 27B-class dense model", "config_facts": {
        "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128},
    "quantization": {"method": "fp8", "bits": 8, "weight_block_size": [128, 128]}, "weights_gib": 28.0, "gpu_mem_gib": 23.58, "tp": 2, "gpu_memory_utilization": 0.92,
    "max_model_len": 32768, "kv_cache_dtype": "fp8", "vllm_version": "0.24.0", "extra_flags": ["--max-num-seqs 2"],
}


def test_a_point_on_an_ampere_card_loads_more_than_on_an_ada_card_of_the_same_memory():
    ampere = predict_point({**POINT, "gpu_model": "rtx_3090"}, use_logged_memory=False)
    ada = predict_point({**POINT, "gpu_model": "l40s"}, use_logged_memory=False)  # its memory: gpu_mem_gib
    assert ampere["available_kv_gib"] == pytest.approx(ada["available_kv_gib"] - 14.0 * PER_ELEMENT, abs=1e-3)
    logged = predict_point({**POINT, "gpu_model": "rtx_3090", "weights_gib_per_rank": 14.68},
                           use_logged_memory=False)
    as_if_ada = predict_point({**POINT, "gpu_model": "l40s", "weights_gib_per_rank": 14.68},
                              use_logged_memory=False)
    assert logged["available_kv_gib"] == as_if_ada["available_kv_gib"]
