"""Planner modes: vLLM GPU budget, vLLM CPU space, MAX free-memory fraction, QAIC; per-rank splits."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts import shipped_facts
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import LaunchSettings, launch_settings
from servekit.fit.versions import counts_cudagraphs, reports_concurrency_tokens
from servekit.fit.planner import FitRequest, plan_fit

H100 = device_from_profile("h100", {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 640})
LLAMA = shipped_facts("meta-llama/Llama-3.1-8B-Instruct")


def test_gpu_budget_is_utilization_of_total_memory():
    low = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(gpu_memory_utilization=0.5, max_model_len=8192)))
    high = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(gpu_memory_utilization=0.9, max_model_len=8192)))
    assert high.budget_gib == pytest.approx(H100.memory_gib * 0.9)
    assert high.available_kv_gib - low.available_kv_gib == pytest.approx(H100.memory_gib * 0.4)
    assert high.weights_gib_per_rank == pytest.approx(16_060_522_496 / (1 << 30))


def test_tp_divides_weights_and_kv_heads():
    one = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(tp=1, max_model_len=8192)))
    four = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(tp=4, max_model_len=8192)))
    assert four.weights_gib_per_rank == pytest.approx(one.weights_gib_per_rank / 4)
    assert four.kv_bytes_per_token == one.kv_bytes_per_token / 4
    assert four.kv_tokens > 4 * one.kv_tokens


def test_fp8_kv_doubles_the_pool_of_a_dense_model():
    auto = plan_fit(FitRequest(LLAMA, H100, launch_settings(["--max-model-len", "8192"])))
    fp8 = plan_fit(FitRequest(LLAMA, H100, launch_settings(["--max-model-len", "8192", "--kv-cache-dtype", "fp8"])))
    assert fp8.kv_tokens == pytest.approx(2 * auto.kv_tokens, rel=0.001)


def test_enforce_eager_and_version_decide_the_cuda_graph_reserve():
    graphs = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(max_model_len=8192)))
    eager = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(max_model_len=8192, enforce_eager=True)))
    old = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(max_model_len=8192), engine_version="0.19.1"))
    assert graphs.cudagraph_gib > 0 and eager.cudagraph_gib == 0 and old.cudagraph_gib == 0
    assert eager.available_kv_gib > graphs.available_kv_gib
    assert counts_cudagraphs("0.27.1") and not counts_cudagraphs("0.11.0") and counts_cudagraphs(None)


def test_language_model_only_drops_the_vision_tower_and_mtp_loads_only_when_drafting():
    facts = shipped_facts("Qwen/Qwen3.8-27B")
    full = plan_fit(FitRequest(facts, H100, LaunchSettings(max_model_len=8192)))
    text = plan_fit(FitRequest(facts, H100, LaunchSettings(max_model_len=8192, language_model_only=True)))
    mtp = plan_fit(FitRequest(facts, H100, LaunchSettings(max_model_len=8192, spec_method="mtp", spec_tokens=3)))
    gib = 1 << 30
    assert full.weights_gib_per_rank - text.weights_gib_per_rank == pytest.approx(facts.weights.vision / gib)
    assert mtp.weights_gib_per_rank - full.weights_gib_per_rank == pytest.approx(facts.weights.mtp / gib)


def test_max_uses_a_fraction_of_free_memory_and_128_token_pages():
    report = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(max_model_len=8192), engine="max",
                                 device_memory_utilization=0.5))
    free = H100.memory_gib - report.weights_gib_per_rank - report.activation_gib - report.runtime_gib
    assert report.available_kv_gib == pytest.approx(free * 0.5)
    assert report.block_size == 128 and report.kv_tokens % 128 == 0


def test_qaic_defaults_to_mxint8_kv():
    device = device_from_profile("qaic", {"brand": "Qualcomm", "generation": "qaic", "gpu_count": 1, "vram_gb": 128})
    report = plan_fit(FitRequest(LLAMA, device, LaunchSettings(max_model_len=8192), engine="vllm-qaic"))
    assert report.kv_cache_dtype == "mxint8"
    assert report.kv_bytes_per_token == 32 * 2 * 8 * 128 * 1


def test_cpu_space_sets_the_pool_exactly():
    xeon = device_from_profile("xeon6", {"brand": "Intel", "generation": "cpu", "gpu_count": 4, "vram_gb": 1024})
    report = plan_fit(FitRequest(LLAMA, xeon, LaunchSettings(max_model_len=8192), cpu_kvcache_space_gib=40))
    per_token = 32 * 2 * 8 * 128 * 2
    assert report.engine == "vllm-cpu"
    assert report.kv_tokens == (40 << 30) // (per_token * 128) * 128


def test_known_available_memory_overrides_the_model():
    report = plan_fit(FitRequest(LLAMA, H100, LaunchSettings(max_model_len=16000, block_size=128),
                                 available_kv_gib=51.38))
    assert report.kv_tokens == 420_864


def test_longest_context_when_the_full_window_does_not_fit():
    small = device_from_profile("rtx_4090", {"brand": "NVIDIA", "generation": "ada", "gpu_count": 1, "vram_gb": 24})
    report = plan_fit(FitRequest(LLAMA, small, LaunchSettings(max_model_len=131072)))
    assert not report.fits
    assert 0 < report.longest_context < 131072
    assert report.longest_context * report.kv_bytes_per_token <= report.available_kv_gib * (1 << 30)


def test_older_releases_logged_the_pool_split_evenly_over_groups():
    facts = shipped_facts("Qwen/Qwen3.8-27B-FP8")
    launch = LaunchSettings(tp=2, max_model_len=131072, kv_cache_dtype="fp8")
    new = plan_fit(FitRequest(facts, H100, launch, available_kv_gib=4.99))
    old = plan_fit(FitRequest(facts, H100, launch, available_kv_gib=4.99, engine_version="0.19.0"))
    assert new.kv_tokens == 302_921
    assert old.kv_tokens == new.num_blocks // 4 * 1568
    assert reports_concurrency_tokens("0.20.1") and not reports_concurrency_tokens("0.20.0")
    assert reports_concurrency_tokens(None) and not reports_concurrency_tokens("0.20.1rc1.dev16")


def test_cuda_graph_sizes_follow_vllm_capture_rules():
    from servekit.fit.memory import capture_sizes, cudagraph_gib

    # 1, 2, 4, steps of 8 below 256, then steps of 16: 51 sizes up to 512, 83 up to 1024
    assert capture_sizes(512) == 51 and capture_sizes(1024) == 83 and capture_sizes(4) == 3
    launch = LaunchSettings(max_model_len=8192)
    gpt_oss = replace(LLAMA, architecture="GptOssForCausalLM")
    # gpt-oss raises its largest capture to 1024 (its v0.19.0 log: 'Overriding max cuda graph capture
    # size to 1024', 83 graphs per mode), whatever max_num_seqs says
    assert cudagraph_gib(gpt_oss, replace(launch, max_num_seqs=6), H100) == pytest.approx(
        cudagraph_gib(LLAMA, launch, H100) * 83 / 51)
    # never above max_num_batched_tokens
    small = replace(launch, max_num_batched_tokens=64)
    assert cudagraph_gib(LLAMA, small, H100) == pytest.approx(cudagraph_gib(LLAMA, launch, H100) * capture_sizes(64) / 51)
