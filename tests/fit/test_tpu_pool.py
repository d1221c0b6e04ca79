"""vLLM on TPU sizes its KV pool from the HBM in use once the weights are loaded, with no
profiling pass: the launch's utilization of the chips' HBM limit less the weights
(tpu-inference ``TPUWorker.determine_available_memory``). No CUDA graphs, activation peak,
runner buffers or runtime memory count, and the chips' limits are the device table's TPU rows.

The public start-up log these tests reproduce (keras-team/keras-io
guides/keras_hub/serving_with_vllm, vLLM 0.26.0 on a v5e-1, Gemma 3 1B through KerasHub with
``max_model_len=512`` and no utilization argument):

    Init model | hbm=[(1.86, 15.75)]GiB
    Memory statistics | total_hbm_limit_gb=15.75GiB | total_hbm_limit_cap_gb=14.49GiB |
        total_hbm_used_gb=1.86GiB | total_hbm_avail_gb=12.63GiB
    GPU KV cache size: 509,184 tokens
    Init kv-cache | num_total_layers=26 | regular_attn_shape=(num_blocks, (32, 1, 2, 256)) |
        regular_attn_dtype=bfloat16

The model registered its 26 layers as one group of full attention with one KV head of 256, so
its facts here are those dimensions (Gemma 3 1B: hidden 1152, 4 heads, intermediate 6912, a
262,144-token vocabulary, tied embeddings: 1.0 B parameters, 1.86 GiB in BF16)."""

from __future__ import annotations

import shlex
from dataclasses import replace

import pytest

from servekit.facts import estimated_weight_bytes, facts_from_config
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import launch_settings
from servekit.fit.planner import FitRequest, plan_fit

V5E = {"brand": "Google", "kind": "tpu", "platform": "tpu", "display_name": "TPU v5e", "gpu_count": 1, "vram_gb": 16}
H100 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 1, "vram_gb": 80}
GEMMA3_1B_AS_LOGGED = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1152, "num_hidden_layers": 26,
    "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912,
    "vocab_size": 262144, "tie_word_embeddings": True, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
}


def _report(profile_name: str, profile: dict, argv: str, version: str | None = "0.26.0"):
    facts = facts_from_config(GEMMA3_1B_AS_LOGGED, model_id="gemma3-1b-as-logged")
    facts = replace(facts, weights=estimated_weight_bytes(GEMMA3_1B_AS_LOGGED, facts))  # from the shapes
    device = device_from_profile(profile_name, profile)
    return plan_fit(FitRequest(facts, device, launch_settings(shlex.split(argv)), engine_version=version))


def test_the_v5e_log_is_reproduced():
    report = _report("tpu_v5e", V5E, "--max-model-len 512")
    assert report.device_memory_gib == 15.75  # the device table's v5e row
    assert report.budget_gib == pytest.approx(14.49, abs=0.005)  # total_hbm_limit_cap_gb
    assert report.weights_gib_per_rank == pytest.approx(1.86, abs=0.01)  # total_hbm_used_gb
    assert report.available_kv_gib == pytest.approx(12.63, abs=0.01)  # total_hbm_avail_gb
    assert report.kv_tokens == pytest.approx(509_184, rel=0.002)  # GPU KV cache size


def test_no_profiling_terms_count_on_a_tpu():
    report = _report("tpu_v5e", V5E, "--max-model-len 512")
    assert (report.activation_gib, report.runtime_gib, report.cudagraph_gib, report.buffers_gib) == (0, 0, 0, 0)
    assert report.available_kv_gib == pytest.approx(report.budget_gib - report.weights_gib_per_rank)


def test_a_gpu_launch_of_the_same_model_still_profiles():
    report = _report("h100", H100, "--max-model-len 512")
    assert report.activation_gib > 0 and report.runtime_gib > 0 and report.cudagraph_gib > 0
    assert report.available_kv_gib < report.budget_gib - report.weights_gib_per_rank


def test_a_stated_utilization_is_the_share_of_the_hbm_limit():
    report = _report("tpu_v5e", V5E, "--max-model-len 512 --gpu-memory-utilization 0.5")
    assert report.budget_gib == pytest.approx(0.5 * 15.75)


def test_a_point_on_a_tpu_chip_is_sized_by_the_tpu_rule():
    """The same launch as a kv-points line naming its chip (``gpu_model: tpu_v5e``, no utilization
    stated: the release's default) gets the logged pool."""
    from servekit.fit.points import predict_point

    point = {"model": "gemma3-1b-as-logged", "gpu_model": "tpu_v5e", "tp": 1, "max_model_len": 512,
             "vllm_version": "0.26.0", "weights_gib": 1.86, "measured_kv_tokens": 509_184,
             "config_facts": {key: GEMMA3_1B_AS_LOGGED[key] for key in (
                 "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                 "vocab_size", "intermediate_size")}}
    result = predict_point(point)
    assert result["available_kv_gib"] == pytest.approx(12.63, abs=0.01)
    assert result["kv_tokens"] == pytest.approx(509_184, rel=0.002)
