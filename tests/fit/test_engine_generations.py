"""Which engine sized the pool (V0 or V1) and with which scheduler limits, release by release
(servekit.fit.versions, servekit.fit.scheduler); figures checked against public start-up logs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts import shipped_facts
from servekit.facts.config import facts_from_config
from servekit.fit.constants import value
from servekit.fit.hardware import custom_device
from servekit.fit.launch import LaunchSettings, launch_settings
from servekit.fit.memory import activation_gib, forward_gib, moe_forward_elements, runtime_gib, sampler_gib
from servekit.fit.planner import FitRequest, plan_fit
from servekit.fit.scheduler import scheduler_limits
from servekit.fit.versions import VersionTextError, VllmRun, read_version, rule

LLAMA = shipped_facts("meta-llama/Llama-3.1-8B-Instruct")
# DeepSeek-V2-Lite / DeepSeek-Coder-V2-Lite config.json shapes (public): MLA without a query down
# projection, 64 routed experts (top-6) after one dense layer
V2_LITE = facts_from_config({
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16,
    "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 64, "n_shared_experts": 2,
    "num_experts_per_tok": 6, "first_k_dense_replace": 1, "vocab_size": 102400, "torch_dtype": "bfloat16",
})


def _gpu(gib: float, name: str, count: int = 1, brand: str = "NVIDIA", interconnect: str | None = None):
    device = custom_device(gib, count, brand=brand)
    return replace(device, profile=replace(device.profile, id=name, interconnect=interconnect))


H100 = _gpu(79.19, "nvidia h100 80gb hbm3")
A100 = _gpu(79.15, "nvidia a100 80gb")
L40S = _gpu(44.42, "nvidia l40s")
MI300X = _gpu(191.98, "amd instinct mi300x", brand="AMD")


def test_releases_read_with_their_patch_number():
    assert read_version("0.8.5").version.release == (0, 8, 5)
    assert read_version("0.10.1.1").version.release == (0, 10, 1, 1)
    assert read_version("v0.19.0").form == "release" and str(read_version("v0.19.0")) == "0.19.0"
    assert read_version("0.9.1.dev705+g01220ce89").form == "development build"


@pytest.mark.parametrize("text", [
    "cuda 12.8 vllm 0.9.0",                 # no first dotted number anywhere: 12.8 is not a vLLM release
    "V0 engine (~0.6.x, Dec 2024)",         # the engine is a field of its own (engine: v0)
    "0.19.0 (vllm/vllm-openai:v0.19.0)",    # an image tag beside the version is free text
    "0.1.dev19754+g3a0914114",              # an untagged build names no release
    "muse-glimmer image", "",
])
def test_version_text_in_no_known_form_is_refused(text):
    with pytest.raises(VersionTextError):
        read_version(text)


@pytest.mark.parametrize("version,platform,env,v0", [
    ("0.7.3", "cuda", {}, True),                      # V1 was an opt-in preview
    ("0.7.3", "cuda", {"VLLM_USE_V1": "1"}, False),
    ("0.8.5", "cuda", {}, False),                     # V1 by default from 0.8
    ("0.8.5", "rocm", {}, True),                      # 'Non-CUDA ... off by default for now'
    ("0.9.2", "rocm", {}, False),                     # vllm-project/vllm#19440
    ("0.10.1.1", "cuda", {"VLLM_USE_V1": "0"}, True),
    ("0.11.0", "cuda", {"VLLM_USE_V1": "0"}, False),  # V0 removed
    ("~0.6", "cuda", {}, True),
    ("V0.8.5", "cuda", {}, False),                    # a 'V' before the version number names no engine
    (None, "cuda", {}, False),
])
def test_which_engine_ran(version, platform, env, v0):
    assert VllmRun(version, env, platform).v0 is v0


def test_a_stated_engine_wins_over_the_release_default():
    assert VllmRun("0.8.5", engine="v0").v0 and not VllmRun("0.7.3", engine="v1").v0
    assert not VllmRun("0.19.0", engine="v0").v0  # V0 is gone from 0.11 (the points reader refuses the pair)


@pytest.mark.parametrize("device,version,expected", [
    (H100, "0.8.2", (8192, 1024)),
    (L40S, "0.8.2", (2048, 1024)),     # V1 began with 1024 sequences everywhere
    (L40S, "0.8.4", (2048, 256)),      # vllm-project/vllm#16158
    (A100, "0.8.5", (8192, 1024)),     # vllm-project/vllm#17073: by memory, A100 included
    (A100, "0.9.0", (2048, 256)),      # vllm-project/vllm#17885: A100 left out
    (H100, "0.19.0", (8192, 1024)),
    (MI300X, "0.27.0", (8192, 1024)),
    (MI300X, "0.28.0", (16384, 1024)),  # the >= 160 GiB tier of v0.28.0
])
def test_v1_scheduler_defaults_by_release(device, version, expected):
    limits = scheduler_limits(LLAMA, LaunchSettings(max_model_len=8192), device, VllmRun(version))
    assert (limits.max_num_batched_tokens, limits.max_num_seqs) == expected


def test_v0_scheduler_defaults():
    v0 = VllmRun("0.7.3")
    short = scheduler_limits(LLAMA, LaunchSettings(max_model_len=8192), H100, v0)
    assert (short.max_num_batched_tokens, short.max_num_seqs) == (8192, 256)
    tiny = scheduler_limits(LLAMA, LaunchSettings(max_model_len=1024), H100, v0)
    assert tiny.max_num_batched_tokens == 2048
    # above 32K chunked prefill is on by default on CUDA, not on ROCm
    long = LaunchSettings(max_model_len=131072)
    assert scheduler_limits(LLAMA, long, H100, v0).max_num_batched_tokens == 2048
    assert scheduler_limits(LLAMA, long, MI300X, VllmRun("0.7.3", platform="rocm")).max_num_batched_tokens == 131072
    # ... nor for MLA models, nor when the command turns it off
    assert scheduler_limits(V2_LITE, long, H100, v0).max_num_batched_tokens == 131072
    off = launch_settings(["--max-model-len", "131072", "--no-enable-chunked-prefill"])
    assert scheduler_limits(LLAMA, off, H100, v0).max_num_batched_tokens == 131072


def test_v0_sampler_sets_the_peak_of_a_short_context_launch():
    # vllm-project/vllm#10511 sanity logs (V0): Meta-Llama-3-8B on H100, default 8192 context,
    # TP1 and TP2 both log a 1.26 GiB activation peak: the sampler's, not the forward pass's
    device = _gpu(79.22, "nvidia h100 80gb hbm3", count=2, interconnect="nvlink")
    v0 = VllmRun("0.6.5")
    one = activation_gib(LLAMA, LaunchSettings(max_model_len=8192), device, v0)
    two = activation_gib(LLAMA, LaunchSettings(max_model_len=8192, tp=2), device, v0)
    assert one == pytest.approx(1.26, rel=0.05) and two == one
    assert sampler_gib(LLAMA, LaunchSettings(max_model_len=8192), device, v0) == one


def test_v0_counts_no_cuda_graphs_and_reports_blocks():
    v0, v1 = VllmRun("0.10.1", {"VLLM_USE_V1": "0"}), VllmRun("0.21.0")
    assert not v0.counts_cudagraphs and v1.counts_cudagraphs
    assert not v0.reports_concurrency_tokens and v1.reports_concurrency_tokens


def test_sampler_path_follows_platform_and_flashinfer_switch():
    assert VllmRun("0.10.1").sampler_constant() == "sampler_bytes_per_logit_flashinfer"
    assert VllmRun("0.10.1", platform="rocm").sampler_constant() == "sampler_bytes_per_logit_sort"
    off = VllmRun("0.10.1", {"VLLM_USE_FLASHINFER_SAMPLER": "0"})
    assert off.sampler_constant() == "sampler_bytes_per_logit_sort"
    # from 0.11.1 FlashInfer's sampler is opt-in, and only on CUDA
    assert VllmRun("0.11.2").sampler_constant() == "sampler_bytes_per_logit_sort"
    on = {"VLLM_USE_FLASHINFER_SAMPLER": "1"}
    assert VllmRun("0.11.2", on).sampler_constant() == "sampler_bytes_per_logit_flashinfer"
    assert VllmRun("0.19.0", on, platform="rocm").sampler_constant() == "sampler_bytes_per_logit_triton"
    # the Triton kernel (0.17+) takes batches of 8 rows or more; smaller ones still sort
    assert VllmRun("0.19.0", platform="rocm").sampler_constant() == "sampler_bytes_per_logit_triton"
    assert VllmRun("0.19.0").sampler_constant(rows=2) == "sampler_bytes_per_logit_sort"
    assert VllmRun("0.7.3").sampler_constant() == "sampler_bytes_per_logit_v0"


def test_approximate_versions_read_as_written_and_say_so():
    """~0.11.0 is 0.11.0, not the last 0.11 patch: the rules that changed at 0.11.1 do not apply."""
    for text, release in (("~0.11.0", (0, 11, 0)), ("~v0.11.x", (0, 11)), ("0.11.x", (0, 11)), ("0.8", (0, 8))):
        found = read_version(text)
        assert found.approximate and found.form == "approximate" and found.version.release == release
    assert rule("sampler", "~0.11.0") == rule("sampler", "0.11.0") == "sampler_bytes_per_logit_flashinfer"
    assert not read_version("0.11.0").approximate


def test_fused_moe_layer_sets_the_forward_peak_of_an_moe_model():
    # vLLM 0.7.1 (V0) log of DeepSeek-Coder-V2-Lite at TP8 on A100-SXM4-40GB, 8192 tokens: activation
    # peak 0.36 GiB, non-torch 2.10 GiB (public SageMaker LMI walkthrough); the dense-MLP term alone
    # would be 0.16 GiB
    launch = LaunchSettings(tp=8, max_model_len=8192, max_num_seqs=2, dtype="float16")
    device = _gpu(39.39, "nvidia a100-sxm4-40gb", count=8, interconnect="nvlink")
    run = VllmRun("0.7.1")
    assert moe_forward_elements(V2_LITE, launch) == 6 * (2048 + 2 * 1408 / 8 / 2) + 3 * 2048
    assert forward_gib(V2_LITE, launch, 8192) == pytest.approx(0.36, rel=0.2)
    assert activation_gib(V2_LITE, launch, device, run) == forward_gib(V2_LITE, launch, 8192)
    assert runtime_gib(launch, device) == pytest.approx(2.10, rel=0.05)


def test_expert_parallel_keeps_experts_whole_in_the_moe_buffers():
    tp = LaunchSettings(tp=8)
    ep = LaunchSettings(tp=8, expert_parallel=True)
    assert moe_forward_elements(V2_LITE, ep) > moe_forward_elements(V2_LITE, tp)
    assert moe_forward_elements(LLAMA, tp) == 0


def test_sliding_layers_pool_as_full_before_the_hybrid_allocator():
    gemma = shipped_facts("google/gemma-3-12b-it")
    assert "sliding" in gemma.layers and "full" in gemma.layers
    launch = LaunchSettings(max_model_len=32768, language_model_only=True)
    old = plan_fit(FitRequest(gemma, H100, launch, engine_version="0.8.5"))
    all_full = replace(gemma, layers=tuple("full" if k == "sliding" else k for k in gemma.layers))
    as_full = plan_fit(FitRequest(all_full, H100, launch, engine_version="0.8.5"))
    assert (old.kv_tokens, old.num_blocks) == (as_full.kv_tokens, as_full.num_blocks)
    # with the hybrid allocator a request of the sliding groups holds only its window, which the
    # pool as logged from 0.21 (max concurrency x max_model_len) shows
    new = plan_fit(FitRequest(gemma, H100, launch, engine_version="0.21.0"))
    assert new.kv_tokens > 2 * old.kv_tokens


def test_env_of_a_request_selects_v0():
    launch = LaunchSettings(max_model_len=8192)
    v1 = plan_fit(FitRequest(LLAMA, L40S, launch, engine_version="0.10.1"))
    v0 = plan_fit(FitRequest(LLAMA, L40S, launch, engine_version="0.10.1", engine_env={"VLLM_USE_V1": "0"}))
    # V0 profiles 8192 tokens over 256 sequences with its own sampler; V1 2048 tokens with FlashInfer's
    assert v0.activation_gib > v1.activation_gib
    assert v0.activation_gib == pytest.approx(256 * 128256 * value("sampler_bytes_per_logit_v0") / (1 << 30))


def test_hybrid_models_get_prefix_caching_by_default_from_0_28():
    hybrid = shipped_facts("Qwen/Qwen3.8-27B")
    assert "linear" in hybrid.layers
    launch = LaunchSettings(max_model_len=65536, language_model_only=True)

    def per_request(version: str | None, stated: bool | None = None) -> int:
        from servekit.fit.kv import pool_layout
        from servekit.fit.planner import kv_options
        run = VllmRun(version)
        opts = kv_options(hybrid, replace(launch, prefix_caching=stated), H100, 2.0, run)
        return pool_layout(hybrid, opts).blocks_per_request

    groups = 3  # 48 linear layers in groups of 16: one state block each, two in 'align' mode
    assert per_request("0.27.1") + groups == per_request("0.28.0") == per_request(None)
    assert per_request("0.27.1", stated=True) == per_request("0.28.0")
    assert per_request("0.28.0", stated=False) == per_request("0.27.1")
    # attention-only models keep prefix caching on in every release (it costs them no blocks)
    assert VllmRun("0.10.1").prefix_caching(None, hybrid=False)
    assert not VllmRun("0.27.1").prefix_caching(None, hybrid=True)


def test_cuda_graph_estimate_by_release_platform_and_switch():
    # vllm/envs.py at v0.20.0 defaults VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS to 1 (0.19: 0); the
    # worker took the estimate on CUDA only until 0.26 (is_cuda() -> is_cuda_alike())
    assert not VllmRun("0.19.1").counts_cudagraphs and VllmRun("0.20.0").counts_cudagraphs
    assert not VllmRun("0.25.1", platform="rocm").counts_cudagraphs
    assert VllmRun("0.26.0", platform="rocm").counts_cudagraphs
    assert not VllmRun("0.24.0", {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "0"}).counts_cudagraphs
    launch = LaunchSettings(max_model_len=8192)
    on_rocm = plan_fit(FitRequest(LLAMA, MI300X, launch, engine_version="0.24.0"))
    assert on_rocm.cudagraph_gib == 0


def test_tensor_parallel_buffers_follow_the_release_and_the_link():
    # non-torch memory logged at TP > 1: 2.06-2.21 GiB on H100 NVSwitch nodes at 0.19 (llm-d-planner
    # accuracy report), 0.54-0.55 GiB on H100 TP2 with late-2025 images (llm-d empirical results)
    nvlink = _gpu(79.19, "nvidia h100 80gb hbm3", count=8, interconnect="nvlink")
    tp2, tp1, pp2 = LaunchSettings(tp=2), LaunchSettings(), LaunchSettings(pp=2)
    assert runtime_gib(tp2, nvlink, "0.19.0") == pytest.approx(2.15, abs=0.1)
    assert runtime_gib(tp2, nvlink, "0.11.2") == pytest.approx(0.55, abs=0.02)
    assert runtime_gib(tp1, nvlink, "0.16.0") == pytest.approx(0.13)
    assert runtime_gib(tp1, nvlink, "0.18.0") == pytest.approx(0.25)
    # pipeline stages pass activations point to point: no all-reduce buffers (0.07 GiB logged at PP2)
    assert runtime_gib(pp2, nvlink, "0.19.0") == runtime_gib(tp1, nvlink, "0.19.0")


def test_moe_workspace_stays_beside_the_sampler_from_0_14():
    # vLLM 0.19.0 on H100 (llm-d-planner accuracy report): Qwen3-30B-A3B logs a 2.68 GiB activation
    # peak where its sampler pass alone is ~2.2 GiB; the Triton MoE workspace (modular kernel, 0.14+)
    # is still allocated when the sampler runs
    qwen3_moe = facts_from_config({
        "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 6144,
        "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
        "vocab_size": 151936, "torch_dtype": "bfloat16",
    })
    launch = LaunchSettings(max_model_len=8192, gpu_memory_utilization=0.95)
    new = activation_gib(qwen3_moe, launch, H100, "0.19.0")
    old = activation_gib(qwen3_moe, launch, H100, "0.13.0")
    assert new == pytest.approx(2.68, abs=0.1)
    assert new > sampler_gib(qwen3_moe, launch, H100, "0.19.0")
    assert old == pytest.approx(sampler_gib(qwen3_moe, launch, H100, "0.13.0"))


def test_rocm_ranks_keep_more_non_torch_memory():
    # V0 logs on ROCm print 0.46-0.66 GiB of non-torch memory on one GPU (MI300X 0.66 at the rocm/vllm
    # 0.9.2.dev364 image); the CUDA figure is 0.25 at 0.19
    one = LaunchSettings()
    assert runtime_gib(one, MI300X, "0.21.0") == pytest.approx(0.6)
    assert runtime_gib(one, H100, "0.21.0") == pytest.approx(0.25)


def test_development_builds_order_before_the_release_they_name():
    """PEP 440 (setuptools-scm's N commits past the last tag, named for the next release): however
    many commits a build is past its base, the rules of the release it names do not apply yet."""
    assert VllmRun("0.11.1.dev12").sampler_constant() == "sampler_bytes_per_logit_flashinfer"
    assert not VllmRun("0.20.1rc1.dev16+g7a1eb8ac2").reports_concurrency_tokens
    assert VllmRun("0.20.1").reports_concurrency_tokens and VllmRun("0.20.1rc1").reports_concurrency_tokens is False
    assert rule("v1_default", "0.9.2.dev364+gb432b7a28") == "cuda"  # a ROCm launch that ran V1 says engine: v1
    assert rule("v1_batch_defaults", "0.28.0rc1.dev5") == "memory_70_not_a100"


def test_offline_llm_class_batches_more_tokens():
    # vllm/engine/arg_utils.py get_batch_defaults: LLM_CLASS 16384 / 8192 against the server's 8192 / 2048
    server = scheduler_limits(LLAMA, LaunchSettings(), L40S, VllmRun("0.11.0"))
    offline = scheduler_limits(LLAMA, LaunchSettings(offline=True), L40S, VllmRun("0.11.0"))
    assert (server.max_num_batched_tokens, offline.max_num_batched_tokens) == (2048, 8192)
    big = scheduler_limits(LLAMA, LaunchSettings(offline=True), H100, VllmRun("0.19.0"))
    assert (big.max_num_batched_tokens, big.max_num_seqs) == (16384, 1024)
