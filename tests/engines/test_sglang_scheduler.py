"""SGLang's scheduler defaults per release and device (servekit.engines.sglang.scheduler)."""

from __future__ import annotations

import pytest

from servekit.engines.sglang.scheduler import chunked_prefill_tokens, max_running_requests, steps_between_reads


@pytest.mark.parametrize(("memory_gib", "version", "tokens"), [
    (79.19, "0.4.6.post5", 8192),      # H100: one rule before 0.4.8, 2048 only under 25,000 MB
    (22.0, "0.4.7", 2048),
    (31.4, "0.4.7", 8192),              # an RTX 5090 passes 25,000 MB
    (31.4, "0.4.8", 2048),              # ... and falls under 35 GiB from 0.4.8
    (178.0, "0.4.7", 8192),
    (178.0, "0.5.2", 16384),            # B200 from 0.4.8
    (44.42, "0.5.2", 8192),             # L40S: no middle tier yet
    (44.42, "0.5.3", 4096),             # the 35-60 GiB tier from 0.5.3
    (44.42, "0.5.3.post3", 4096),
    (22.0, "0.5.19", 2048),             # L4
    (22.0, "0.5.20", 4096),             # from 0.5.20 a 20 GiB part prefills 4096
    (15.0, "0.5.23", 2048),
    (139.8, "0.5.4.post2", 8192),       # H200
    (191.5, None, 16384),               # MI300X, release not stated: the newest rule
    (22.0, None, 4096),
    (22.0, "not a release", 4096),
])
def test_the_step_budget_follows_the_release_and_the_memory_the_gpu_reports(memory_gib, version, tokens):
    assert chunked_prefill_tokens(memory_gib, version) == tokens


def test_a_gpu_of_unknown_memory_takes_the_fallback_of_its_release():
    assert chunked_prefill_tokens(None, "0.4.7") == 8192
    assert chunked_prefill_tokens(0.0, "0.5.3") == 4096
    assert chunked_prefill_tokens(None, None) == 4096


def test_running_requests_are_half_the_pool_at_most_and_the_request_pool_clamped_to_2048_4096():
    # the request pool: pool / context x 512, clamped
    assert max_running_requests(430_966, 131_072) == 2048           # 1,683 -> the floor
    assert max_running_requests(1_241_198, 131_072) == 4096         # 4,848 -> the ceiling
    assert max_running_requests(700_000, 131_072) == 2734           # 2,734 inside the clamp
    # half the pool binds on a small pool
    assert max_running_requests(3_000, 4_096) == 1500
    # unknown context: the clamp's ceiling; unknown pool: 4096
    assert max_running_requests(100_000) == 4096
    assert max_running_requests(None, 8192) == 4096


QWEN_05B = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "num_hidden_layers": 24,
            "num_attention_heads": 14, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 4864,
            "vocab_size": 151936, "tie_word_embeddings": True, "params_total_b": 0.494, "params_active_b": 0.494}


def _sglang_line(gpu: str, version: str | None, **extra) -> dict:
    return {"id": "t", "engine": "sglang", "engine_version": version, "config_facts": QWEN_05B,
            "weights_precision": "bf16", "gpu": gpu, "gpu_count": 1, "tp": 1,
            "workload": {"input_len": 1024, "output_len": 128, "concurrency": 64}, **extra}


@pytest.mark.parametrize(("gpu", "version", "tokens"), [
    ("h100", "0.5.3", 8192), ("mi300x", "0.5.3", 16384), ("b200", "0.5.2", 16384), ("l40s", "0.5.2", 8192),
    ("l40s", "0.5.4.post2", 4096), ("rtx_5090", "0.5.3.post3", 2048), ("rtx_5090", None, 4096),
    ("l4", "0.5.3", 2048),  # no measured row: the datasheet's 24 GB at the assumed usable share
    ("tpu7x", "0.5.3", 4096),  # no memory figure at all: memory unknown, the fallback
])
def test_a_perf_line_of_sglang_takes_the_step_budget_of_its_release_and_gpu(gpu, version, tokens):
    from servekit.app.request import load_documents
    from servekit.hardware import profiles_for
    from servekit.perf.points import launch_of

    launch = launch_of(_sglang_line(gpu, version), profiles_for(load_documents(None).taxonomy))
    assert launch.limits.max_num_batched_tokens == tokens
    assert 2048 <= launch.limits.max_num_seqs <= 4096


def test_a_perf_line_that_names_its_limits_keeps_them():
    from servekit.app.request import load_documents
    from servekit.hardware import profiles_for
    from servekit.perf.points import launch_of

    line = _sglang_line("mi300x", "0.5.3", max_num_seqs=64, max_num_batched_tokens=2048)
    launch = launch_of(line, profiles_for(load_documents(None).taxonomy))
    assert (launch.limits.max_num_seqs, launch.limits.max_num_batched_tokens) == (64, 2048)


def test_a_perf_line_of_sglang_plans_its_pool_with_sglangs_memory_rule():
    """The fraction the release picks holds weights and the pool; vLLM's rule is not borrowed."""
    from servekit.app.request import load_documents
    from servekit.engines.sglang.memory import default_mem_fraction_static
    from servekit.hardware import profiles_for
    from servekit.perf.points import kv_pool, shape_facts

    profile = profiles_for(load_documents(None).taxonomy)["h100"]
    sglang = _sglang_line("h100", "0.5.3")
    pool = kv_pool(sglang, shape_facts(sglang), profile, 1, 1)
    vllm = kv_pool({**sglang, "engine": "vllm", "engine_version": "0.11.0"}, shape_facts(sglang), profile, 1, 1)
    fraction = default_mem_fraction_static(profile.memory_gib * 1024, 1, 1, "0.5.3")
    assert fraction == pytest.approx(0.834, abs=1e-3)
    weights = pool["weights_gib_per_rank"]
    assert pool["available_kv_gib"] == pytest.approx(profile.memory_gib * fraction - weights - 0.25, abs=0.02)
    assert pool["available_kv_gib"] < vllm["available_kv_gib"]


def test_new_requests_are_read_every_recv_interval_turns_of_continuous_decode_steps():
    assert steps_between_reads() == 1  # both default to 1: every step
    assert steps_between_reads(30) == 30
    assert steps_between_reads(None, 4) == 4
    assert steps_between_reads(10, 4) == 40
