"""KV bytes per layer kind and the hybrid block-pool arithmetic."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts import shipped_facts
from servekit.facts.config import facts_from_config
from servekit.fit.dtypes import DtypeError, kv_dtype_bytes
from servekit.fit.hardware import device_from_profile
from servekit.fit.kv import KVOptions, attention_token_bytes, linear_state_bytes, pool_layout
from servekit.fit.launch import LaunchSettings
from servekit.fit.planner import FitRequest, plan_fit

GIB = 1 << 30


def _dense(layers=32, heads=32, kv=8, head_dim=128, **extra):
    return facts_from_config({"num_hidden_layers": layers, "num_attention_heads": heads,
                              "num_key_value_heads": kv, "head_dim": head_dim, "hidden_size": heads * head_dim,
                              "torch_dtype": "bfloat16", **extra})


def test_full_attention_bytes_per_token_and_pool():
    facts = _dense()
    assert attention_token_bytes(facts, "full", 2, tp=1) == 2 * 8 * 128 * 2
    layout = pool_layout(facts, KVOptions(kv_bytes=2, max_model_len=16000, block_size=128))
    assert layout.kv_bytes_per_token == 131072
    # 51.38 GiB measured on an H100 for Llama-3.1-8B -> 420,864 tokens logged
    assert layout.tokens_for(51.38 * GIB, 16000) == 420_864


def test_tp_splits_kv_heads_and_replicates_them_past_their_count():
    facts = _dense(kv=8)
    assert attention_token_bytes(facts, "full", 2, tp=4) == 2 * 2 * 128 * 2
    assert attention_token_bytes(facts, "full", 2, tp=16) == 2 * 1 * 128 * 2


def test_fp8_and_mxint8_kv_halve_bf16():
    assert kv_dtype_bytes("fp8", "bfloat16") == 1
    assert kv_dtype_bytes("mxint8", "bfloat16") == 1
    assert kv_dtype_bytes("auto", "float32") == 4
    with pytest.raises(DtypeError):
        kv_dtype_bytes("fp7", "bfloat16")


def test_sliding_window_layers_hold_at_most_the_window():
    gemma = shipped_facts("google/gemma-3-12b-it")
    full_only = replace(gemma, layers=("full",) * 48, sliding_window=None)
    opts = KVOptions(kv_bytes=2, max_model_len=131072, max_num_batched_tokens=8192)
    hybrid = pool_layout(gemma, opts).tokens_for(40 * GIB, 131072)
    plain = pool_layout(full_only, opts).tokens_for(40 * GIB, 131072)
    assert hybrid > 3 * plain  # 8 of 48 layers keep the whole context
    layout = pool_layout(gemma, opts)
    assert layout.group_size == 8 and layout.num_groups == 6


def test_linear_attention_state_is_constant_per_sequence():
    facts = shipped_facts("Qwen/Qwen3.8-27B-FP8")
    # conv (2*16*128 + 48*128)/2 x 3 x 2 B + recurrent 24 x 128 x 128 x 4 B (float32 state)
    assert linear_state_bytes(facts, tp=2) == 5120 * 3 * 2 + 24 * 128 * 128 * 4
    short = pool_layout(facts, KVOptions(kv_bytes=1, tp=2, max_model_len=4096))
    long = pool_layout(facts, KVOptions(kv_bytes=1, tp=2, max_model_len=131072))
    assert short.block_bytes == long.block_bytes
    # an attention page is raised to hold one whole state: block size 1568 tokens (logged in the wild)
    assert long.block_size == 1568 and long.group_size == 16 and long.num_groups == 4
    # 16 full-attention layers x 2 x 2 KV heads x 256 x 1 B per token per rank
    assert long.kv_bytes_per_token == 16 * 2 * 2 * 256


def test_hybrid_pool_matches_a_logged_start_up_exactly():
    facts = shipped_facts("Qwen/Qwen3.8-27B-FP8")
    layout = pool_layout(facts, KVOptions(kv_bytes=1, tp=2, max_model_len=131072, prefix_caching=True))
    assert layout.tokens_for(4.99 * GIB, 131072) == 302_921
    with_mtp = pool_layout(facts, KVOptions(kv_bytes=1, tp=2, max_model_len=262144, spec_tokens=3, mtp_layers=1))
    assert with_mtp.group_size == 17 and with_mtp.block_size == 1600
    assert with_mtp.tokens_for(5.33 * GIB, 262144) == 300_220


def test_hybrid_block_size_is_a_multiple_of_the_configured_block_size():
    from servekit.fit.kv import hybrid_block_size

    facts = shipped_facts("Qwen/Qwen3.8-27B-FP8")
    state = linear_state_bytes(facts, tp=2)
    # one fp8 page of 2 KV heads x 256 per token on a rank: 1,024 B; the state needs 1,566 tokens
    assert hybrid_block_size(16, 1024, state) == 1568
    assert hybrid_block_size(64, 1024, state) == 64 * 25
    assert hybrid_block_size(16, 1024, state, mla=True) == 128 * 13
    assert pool_layout(facts, KVOptions(kv_bytes=1, tp=2, block_size=64)).block_size == 1600


def test_mla_latent_is_replicated_on_every_tp_rank():
    facts = facts_from_config({"num_hidden_layers": 61, "num_attention_heads": 64, "hidden_size": 7168,
                               "kv_lora_rank": 512, "qk_rope_head_dim": 64, "torch_dtype": "bfloat16"})
    assert attention_token_bytes(facts, "mla", 2, tp=1) == attention_token_bytes(facts, "mla", 2, tp=8) == 1152
    layout = pool_layout(facts, KVOptions(kv_bytes=2, tp=8, max_model_len=262144))
    assert layout.tokens_for(46.8 * GIB, 262144) == pytest.approx(715_072, rel=0.001)
    dcp = pool_layout(facts, KVOptions(kv_bytes=2, tp=8, max_model_len=262144, context_parallel=8))
    assert dcp.tokens_for(46.8 * GIB, 262144) == pytest.approx(5_721_088, rel=0.001)


XEON = device_from_profile("xeon6", {"brand": "Intel", "generation": "cpu", "gpu_count": 4, "vram_gb": 1024})


def _cpu_pool(facts, space_gib=1, **launch):
    settings = LaunchSettings(**{"max_model_len": 1024, **launch})
    return plan_fit(FitRequest(facts, XEON, settings, cpu_kvcache_space_gib=space_gib)).kv_tokens


def test_cpu_pool_is_space_over_layers_times_kv_in_whole_blocks():
    facts = _dense(layers=2, heads=2, kv=1, head_dim=64)
    per_token = 2 * 2 * 1 * 64 * 2
    assert _cpu_pool(facts) == GIB // (per_token * 128) * 128
    assert _cpu_pool(facts, block_size=16) == GIB // (per_token * 16) * 16
    # a max-model-len that is not a whole number of blocks: concurrency x max-model-len
    blocks = GIB // (per_token * 128)
    assert _cpu_pool(facts, max_model_len=1000) == int(blocks / 8 * 1000)


def test_mamba2_state_and_mlp_only_layers_in_the_pool():
    pattern = "M-M-M-M*-" * 4
    facts = facts_from_config({"num_hidden_layers": len(pattern), "hybrid_override_pattern": pattern,
                               "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                               "hidden_size": 4480, "mamba_num_heads": 128, "mamba_head_dim": 80,
                               "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "torch_dtype": "bfloat16"})
    assert facts.layer_counts() == {"linear": 16, "none": 16, "full": 4}
    state = (128 * 80 + 2 * 8 * 128) * 3 * 2 + 128 * 80 * 128 * 2
    assert linear_state_bytes(facts, tp=1) == state
    layout = pool_layout(facts, KVOptions(kv_bytes=2, max_model_len=32768))
    page_tokens = layout.block_size
    assert page_tokens % 16 == 0 and page_tokens * 2 * 8 * 128 * 2 >= state
    assert layout.group_size == 4 and layout.num_groups == 5  # 1 attention + 4 Mamba groups
    # MLP-only layers keep nothing
    assert layout.kv_bytes_per_token == 4 * 2 * 8 * 128 * 2


def test_kv_sharing_layers_and_wider_global_heads():
    # Gemma 4 E4B (config.json): 42 layers of 5 sliding (window 512) to 1 full, head_dim 256 and
    # global_head_dim 512, 2 KV heads, the last 18 layers reusing earlier layers' KV
    from servekit.facts.config import facts_from_config
    from servekit.fit.kv import KVOptions, pool_layout

    types = (["sliding_attention"] * 5 + ["full_attention"]) * 7
    cfg = {"architectures": ["Gemma4ForCausalLM"], "num_hidden_layers": 42, "num_attention_heads": 8,
           "num_key_value_heads": 2, "head_dim": 256, "global_head_dim": 512, "hidden_size": 2560,
           "sliding_window": 512, "layer_types": types, "num_kv_shared_layers": 18, "vocab_size": 262144}
    facts = facts_from_config(cfg)
    assert facts.cache_layer_counts() == {"sliding": 20, "full": 4}
    layout = pool_layout(facts, KVOptions(kv_bytes=2, max_model_len=16384, max_num_batched_tokens=2048))
    per_token = {g.kind: g.token_bytes for g in layout.groups}
    assert per_token == {"full": 2 * 2 * 512 * 2, "sliding": 2 * 2 * 256 * 2}
    # a 22.01 GiB pool holds 63.1 such 16,384-token requests on an L40S under 0.25.1 (public notes)
    concurrency = layout.blocks_for(22.01 * (1 << 30)) / layout.blocks_per_request
    assert concurrency == pytest.approx(63.1, rel=0.01)


def test_eagle_head_layers_share_the_pool():
    # vllm-project/vllm#19996: a Llama-3 8B with an EAGLE head logs 51.63 GiB for 410,128 tokens,
    # 135,171 B per token: 33 layers of 8 KV heads x 128 x 2 x 2 B (32 target layers + the head's one)
    from servekit.fit.launch import launch_settings

    llama = shipped_facts("meta-llama/Llama-3.1-8B-Instruct")
    h100 = device_from_profile("h100", {"brand": "NVIDIA", "gpu_count": 1, "vram_gb": 80})
    plain = launch_settings(["--max-model-len", "131072"])
    eagle = launch_settings(["--max-model-len", "131072", "--speculative-config",
                             '{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'])
    known = plan_fit(FitRequest(llama, h100, plain, available_kv_gib=51.63, engine_version="0.9.1"))
    drafting = plan_fit(FitRequest(llama, h100, eagle, available_kv_gib=51.63, engine_version="0.9.1"))
    assert known.kv_tokens == 51.63 * (1 << 30) // (32 * 8 * 128 * 4) // 16 * 16
    assert drafting.kv_tokens == pytest.approx(410_128, rel=0.002)
