"""The fused-MoE caches are sized for one chunk of the profiled pass where the release chunks it
(``moe_chunk`` in ``servekit.fit.release_rules``): 32768 tokens up to 0.11, 16384 from 0.12, the
whole pass from 0.18 (read in vLLM's wheels per release: fused_experts_impl, the modular kernel's
_chunk_info and envs.py)."""

from __future__ import annotations

import pytest

from servekit.facts.config import facts_from_config
from servekit.fit.dtypes import dtype_bytes
from servekit.fit.launch import LaunchSettings
from servekit.fit.memory import GIB, forward_gib, moe_cache_elements, moe_cache_tokens, moe_workspace_gib
from servekit.fit.versions import VllmRun, rule

QWEN3_MOE = facts_from_config({
    "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 6144,
    "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
    "vocab_size": 151936, "torch_dtype": "bfloat16",
})


def test_chunk_size_by_release():
    assert rule("moe_chunk", "0.8.5") == "32768" and rule("moe_chunk", "0.11.0") == "32768"
    assert rule("moe_chunk", "0.12.0") == "16384" and rule("moe_chunk", "0.17.0") == "16384"
    assert rule("moe_chunk", "0.18.0") == "none" and rule("moe_chunk", "0.32.0") == "none"
    assert VllmRun("0.10.2").moe_chunk_tokens == 32768
    assert VllmRun("0.14.0").moe_chunk_tokens == 16384
    assert VllmRun("0.19.0").moe_chunk_tokens is None


def test_chunk_size_follows_the_environment():
    assert VllmRun("0.10.2", {"VLLM_FUSED_MOE_CHUNK_SIZE": "4096"}).moe_chunk_tokens == 4096
    # the switch only exists for the modular kernel (0.14-0.17); fused_experts_impl always chunks
    off = {"VLLM_ENABLE_FUSED_MOE_ACTIVATION_CHUNKING": "0"}
    assert VllmRun("0.15.0", off).moe_chunk_tokens is None
    assert VllmRun("0.12.0", off).moe_chunk_tokens == 16384
    # a release without chunking ignores the old variable
    assert VllmRun("0.19.0", {"VLLM_FUSED_MOE_CHUNK_SIZE": "4096"}).moe_chunk_tokens is None


def test_caches_stop_growing_past_one_chunk():
    launch = LaunchSettings(max_model_len=131072)
    assert moe_cache_tokens(8192, 16384) == 8192
    assert moe_cache_tokens(131072, 32768) == 32768
    assert moe_cache_tokens(131072, None) == 131072
    whole = forward_gib(QWEN3_MOE, launch, 131072)
    chunked = forward_gib(QWEN3_MOE, launch, 131072, moe_chunk=32768)
    per_token_caches = moe_cache_elements(QWEN3_MOE, launch) * dtype_bytes("bfloat16") / GIB
    assert whole - chunked == pytest.approx((131072 - 32768) * per_token_caches)
    # below one chunk nothing changes
    assert forward_gib(QWEN3_MOE, launch, 8192, moe_chunk=16384) == forward_gib(QWEN3_MOE, launch, 8192)


def test_persistent_workspace_is_one_chunk_until_0_18():
    launch = LaunchSettings(max_model_len=65536)
    tokens = 65536
    at_17 = moe_workspace_gib(QWEN3_MOE, launch, tokens, VllmRun("0.17.0"))
    at_18 = moe_workspace_gib(QWEN3_MOE, launch, tokens, VllmRun("0.18.0"))
    assert at_18 == pytest.approx(4 * at_17)
    assert moe_workspace_gib(QWEN3_MOE, launch, tokens, VllmRun("0.13.0")) == 0.0
