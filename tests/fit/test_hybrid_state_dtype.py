"""The KV tokens vLLM reports for hybrid (Gated DeltaNet + full attention) models: the recurrent
state's dtype sets the attention block size, and the release's report form turns blocks into the
logged token count (servekit.facts.linear, servekit.fit.kv, servekit.fit.release_rules pool_report)."""

from __future__ import annotations

import pytest

from servekit.fit.planner import launch_facts
from servekit.fit.points import facts_from_point, launch_from_point
from testing.kv_layout import point_layout

GDN = {"num_hidden_layers": 48, "full_attention_interval": 4, "num_attention_heads": 16, "num_key_value_heads": 2,
       "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
       "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4}




def test_the_recurrent_state_follows_the_model_dtype_unless_the_config_states_one():
    model_dtype, _ = facts_from_point(GDN)
    float32, _ = facts_from_point({**GDN, "mamba_ssm_dtype": "float32"})
    assert model_dtype.linear.state_dtype is None and float32.linear.state_dtype == "float32"
    line = {"config_facts": GDN, "tp": 2, "max_model_len": 32768, "vllm_version": "0.11.0", "kv_cache_dtype": "fp8"}
    half = point_layout(line)
    full = point_layout({**line, "config_facts": {**GDN, "mamba_ssm_dtype": "float32"}})
    # a float32 state is twice the recurrent bytes: the attention page that must hold it doubles
    assert full.block_size == pytest.approx(2 * half.block_size, rel=0.03)


def test_qwen3_next_at_0_11_logs_the_blocks_of_a_model_dtype_state(structured_points):
    """Point 23 (Qwen3-Next-80B int4, TP2, --dtype float16, fp8_e5m2 KV, ~0.11.0) has no device
    memory, but its log gives both the token count and the concurrency: 90,048 tokens are
    num_blocks // groups x block size of the pre-0.20.1 report, and 1.66x is num_blocks over the
    blocks one request takes. A float16 recurrent state gives 1,072-token blocks, 4 groups and
    204 blocks per request; 339 blocks reproduce both figures (a float32 state would not: 2,096)."""
    point = dict(structured_points)["kv-points-visible.jsonl:23"]
    layout = point_layout(point)
    assert layout.block_size == 1072 and layout.num_groups == 4 and layout.blocks_per_request == 204
    blocks = 339
    assert blocks // layout.num_groups * layout.block_size == point["measured_kv_tokens"] == 90_048
    assert blocks / layout.blocks_per_request == pytest.approx(point["measured_concurrency"], abs=0.005)
    assert point_layout({**point, "config_facts": {**point["config_facts"], "mamba_ssm_dtype": "float32"}}).block_size == 2096


def test_mamba_ssm_cache_dtype_on_the_command_line_wins():
    line = {"config_facts": GDN, "tp": 2, "max_model_len": 32768, "vllm_version": "0.19.0", "kv_cache_dtype": "fp8"}
    facts, _ = facts_from_point(GDN)
    chosen = launch_facts(facts, launch_from_point({**line, "extra_flags": ["--mamba-ssm-cache-dtype float32"]}))
    kept = launch_facts(facts, launch_from_point({**line, "extra_flags": ["--mamba-ssm-cache-dtype auto"]}))
    assert chosen.linear.state_dtype == "float32" and kept.linear.state_dtype is None
