"""``servekit perf MODEL``: the JSON shape, the workload options, and refusals."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main
from servekit.perf.constants import constant


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_shape(capsys):
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "1024",
                        "--output-len", "1024", "--concurrency", "64", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["tp"] == 2 and doc["devices"] == 2 and doc["batch"] == 64
    assert doc["output_throughput_per_device_tok_s"] * 2 == pytest.approx(doc["output_throughput_tok_s"], abs=0.01)
    for key in ("ttft_ms", "tpot_ms"):
        assert doc[key]["median"] <= doc[key]["p99"]
        for stat in ("median", "p99"):
            lo, hi = doc["interval80"][key][stat]
            assert lo <= doc[key][stat] <= hi
    lo, hi = doc["interval80"]["output_throughput_tok_s"]
    assert lo <= doc["output_throughput_tok_s"] <= hi
    assert doc["binding"] in {"weight bandwidth", "KV bandwidth", "activation traffic", "compute", "communication",
                              "engine overhead", "scheduler limit", "KV pool", "client concurrency"}
    assert set(doc["terms_ms"]) == {"weights", "kv", "activations", "compute", "communication", "overhead"}
    # H100 SXM's datasheet 3,350 GB/s at the fitted share, its NVLink at 450 GB/s one way
    assert doc["rates"]["memory_gb_s"] == pytest.approx(3350 * constant("bandwidth_fraction"), rel=1e-3)
    assert doc["rates"]["tflops"] > 0 and doc["rates"]["link_gb_s"] == 450


def test_request_rate_and_text(capsys):
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--request-rate", "1")
    assert code == 0 and "output throughput" in out and "binding:" in out and "TPOT median" in out
    assert "per device, achieved: memory" in out and "requests run in" not in out  # arrivals apart


def test_the_text_says_how_a_closed_loop_runs(capsys):
    """64 clients of 1024-token prompts overflow vLLM's 8,192-token step on an H100: cohorts; 4 fit: waves."""
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "1024",
                        "--output-len", "1024", "--concurrency", "64", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["regime"].startswith("cohorts of ") and doc["max_num_batched_tokens"] == 8192
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "1024",
                        "--output-len", "1024", "--concurrency", "64")
    assert f"requests run in {doc['regime']} (their prompts overflow one step's 8,192 batched tokens)" in out
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "1024",
                        "--output-len", "1024", "--concurrency", "4")
    assert "requests run in waves of 4 (the prompts of a wave fit one step)" in out


def test_fp8_variant_on_h200_is_faster_per_device_than_bf16(capsys):
    docs = []
    for variant in ("default", "fp8"):
        code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--variant", variant, "--tp", "1",
                            "--concurrency", "1", "--format", "json")
        assert code == 0
        docs.append(json.loads(out))
    assert docs[1]["weights_format"] == "fp8"
    assert docs[1]["tpot_ms"]["median"] < docs[0]["tpot_ms"]["median"]


def test_a_few_prompts_at_once_all_run_and_none_waits_for_a_slot(capsys):
    """``--input-len``/``--output-len`` are every request's lengths (as ``servekit bench`` runs
    them): four prompts sent at once run together, as four clients do, whatever the engine's
    occupancy of a dataset's burst."""
    base = ("perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "128", "--output-len", "128",
            "--format", "json")
    code, out, _ = _run(capsys, *base, "--num-prompts", "4")
    assert code == 0
    offline = json.loads(out)
    code, out, _ = _run(capsys, *base, "--concurrency", "4", "--num-prompts", "4")
    closed = json.loads(out)
    assert offline["batch"] == closed["batch"] == 4 and offline["binding"] != "scheduler limit"
    assert offline["output_throughput_tok_s"] == pytest.approx(closed["output_throughput_tok_s"], rel=0.1)
    assert offline["ttft_ms"]["median"] <= closed["ttft_ms"]["median"] * 1.05


def test_refusals(capsys):
    code, _, err = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--concurrency", "4",
                        "--request-rate", "2")
    assert code != 0 and "--concurrency" in err and "Traceback" not in err
    code, _, err = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "xeon6")
    assert code != 0 and "Traceback" not in err
    code, _, err = _run(capsys, "perf", "Qwen/Qwen3.8-27B")
    assert code != 0 and "--hardware" in err


def _fit_report(**fields):
    """A fit report at 4,096 tokens with the given pool and device; the terms the speed model does
    not read are fixed."""
    from servekit.fit.planner import FitReport

    base = dict(engine="vllm", pp=1, max_model_len=4096, kv_cache_dtype="auto", activation_gib=1.0,
                runtime_gib=1.0, cudagraph_gib=0.5, linear_state_bytes_per_seq=0, longest_context=4096,
                weights_known=True)
    return FitReport(**{**base, **fields})


def test_a_checkpoints_mla_width_and_output_head_reach_the_speed_model():
    from servekit.app.perf import model_shape
    from servekit.facts.config import facts_from_config

    cfg = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
           "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512,
           "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 256,
           "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "intermediate_size": 18432,
           "first_k_dense_replace": 3, "vocab_size": 129280, "torch_dtype": "bfloat16"}
    report = _fit_report(device="h200", tp=8, budget_gib=120.0, weights_gib_per_rank=80.0, available_kv_gib=30.0,
                         kv_bytes_per_token=70272.0, block_size=64, kv_tokens=400_000, max_concurrency=97.0)
    shape = model_shape(facts_from_config(cfg), report, "fp8")
    assert shape.decode_width == 2 * 512 + 64 and shape.vocab == 129280
    dense = model_shape(facts_from_config({**cfg, "kv_lora_rank": None, "n_routed_experts": None}), report, "fp8")
    assert dense.decode_width == dense.attention_dim


def test_expert_parallel_dp_ranks_share_the_experts_and_plain_dp_replicates():
    from types import SimpleNamespace

    from servekit.app.perf import layout_of
    from servekit.fit.launch import launch_settings

    report = SimpleNamespace(tp=2, pp=1)
    shared, dp = layout_of(report, launch_settings(["-tp", "2", "-dp", "4", "--enable-expert-parallel"]))
    assert (shared.expert_replicas, shared.attention_dp, dp) == (4, 1, 4)
    apart, dp = layout_of(report, launch_settings(["-tp", "2", "-dp", "4"]))
    assert (apart.expert_replicas, apart.attention_dp, dp) == (1, 1, 4)


def test_the_launchs_async_scheduling_switch_is_read_from_its_argv():
    """The plan's own ``--async-scheduling`` / ``--no-async-scheduling`` reaches the speed model
    (``servekit.perf.launch.overlaps_host_work``'s ``stated``); absent, the release decides."""
    from servekit.fit.launch import launch_settings

    assert launch_settings(["--async-scheduling"]).async_scheduling is True
    assert launch_settings(["--no-async-scheduling"]).async_scheduling is False
    assert launch_settings(["-tp", "2"]).async_scheduling is None


def test_another_modalitys_experts_are_not_streamed_for_text():
    from servekit.app.perf import model_shape
    from servekit.facts.config import facts_from_config

    cfg = {"architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "hidden_size": 2560, "num_hidden_layers": 28,
           "num_attention_heads": 20, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 12288,
           "vocab_size": 103424, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "moe_k": 6,
           "moe_num_experts": [64, 64], "moe_intermediate_size": [1536, 512], "moe_num_shared_experts": 2,
           "moe_layer_start_index": [1, 1], "moe_layer_end_index": [27, 27]}
    report = _fit_report(device="h100", tp=1, budget_gib=70.0, weights_gib_per_rank=55.0, available_kv_gib=10.0,
                         kv_bytes_per_token=57344.0, block_size=16, kv_tokens=180_000, max_concurrency=40.0)
    with_pool = model_shape(facts_from_config(cfg), report, "bf16")
    vision = 27 * 64 * 3 * 2560 * 512
    assert with_pool.unread_params == vision
    text = {**cfg, "moe_num_experts": 64, "moe_intermediate_size": 1536,
            "moe_layer_start_index": 1, "moe_layer_end_index": 27}
    without = model_shape(facts_from_config(text), report, "bf16")
    # the same checkpoint bytes: what the vision pool holds leaves the streamed dense bytes and the active parameters
    assert without.streamed_dense_bytes - with_pool.streamed_dense_bytes == vision * 2
    assert without.params_active - with_pool.params_active == vision
