"""``servekit perf --points``: the output schema, free text never read, bad lines."""

from __future__ import annotations

import copy
import json

import pytest

from servekit.cli.app import main
from servekit.fit.versions import VllmRun
from servekit.jsonl import objects

BINDINGS = {"weight bandwidth", "KV bandwidth", "activation traffic", "compute", "communication", "engine overhead",
            "scheduler limit", "KV pool", "client concurrency"}
METRICS = ("output_throughput_tok_s", "ttft_ms", "tpot_ms")


def _run(capsys, tmp_path, lines: list) -> tuple[int, list[dict]]:
    path = tmp_path / "points.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    code = main(["perf", "--points", str(path)])
    return code, list(objects(capsys.readouterr().out.splitlines()))


def _unmeasured(point: dict) -> dict:
    return {k: v for k, v in point.items() if k != "measured"}


def test_one_line_per_point_in_the_contract_shape(capsys, tmp_path, perf_points):
    code, out = _run(capsys, tmp_path, [_unmeasured(p) for p in perf_points])
    assert code == 0 and len(out) == len(perf_points)
    for point, line in zip(perf_points, out):
        assert line["id"] == point["id"]
        assert line["binding"] in BINDINGS
        for key in METRICS:
            lo, hi = line["interval80"][key]
            assert 0 < lo <= line[key] <= hi, (point["id"], key)


def test_free_text_and_measurements_are_not_read(capsys, tmp_path, perf_points):
    plain = [_unmeasured(p) for p in perf_points[:6]]
    noisy = copy.deepcopy(perf_points[:6])
    for p in noisy:
        p.update(notes="TP 8, 3x faster", source="nowhere", confidence="low", model="other/Model")
        p["measured"] = {"output_throughput_tok_s": 1.0, "ttft_ms": 1.0, "tpot_ms": 1.0}
    _, first = _run(capsys, tmp_path, plain)
    _, second = _run(capsys, tmp_path, noisy)
    assert first == second


def test_a_bad_line_is_that_lines_error(capsys, tmp_path, perf_points):
    good = _unmeasured(perf_points[0])
    no_gpu = {**good, "gpu": "warp_drive"}
    no_facts = {k: v for k, v in good.items() if k != "config_facts"}
    code, out = _run(capsys, tmp_path, [good, "not json", no_gpu, no_facts])
    assert code == 0 and "output_throughput_tok_s" in out[0]
    assert out[1]["error"].startswith("line 2")
    assert "line 3" in out[2]["error"] and "warp_drive" in out[2]["error"]
    assert "line 4" in out[3]["error"] and "config_facts" in out[3]["error"]


def test_every_line_bad_exits_1(capsys, tmp_path):
    code, out = _run(capsys, tmp_path, ["{}"])
    assert code == 1 and "error" in out[0]


def test_a_part_of_the_speed_table_without_a_hardware_entry(capsys, tmp_path, perf_points):
    base = _unmeasured(next(p for p in perf_points if p["gpu"] == "a100" and p["config_facts"]["params_total_b"] < 20))
    big_model = _unmeasured(next(p for p in perf_points if p["gpu"] == "a100" and p["config_facts"]["params_total_b"] > 30
                                 and p["tp"] == 1))
    lines = [{**base, "gpu": "a100_40gb"}, {**base, "gpu": "h20"}, {**base, "gpu": "a100"},
             {**big_model, "gpu": "a100_40gb"}]
    code, out = _run(capsys, tmp_path, lines)
    assert code == 0 and all("error" not in line for line in out[:3])
    small, h20, big, too_big = out
    assert small["output_throughput_tok_s"] <= big["output_throughput_tok_s"]  # less memory: a smaller pool
    assert h20["binding"] in BINDINGS
    assert "line 4" in too_big["error"] and "KV pool" in too_big["error"]  # 64 GB of weights on a 40 GB card


def test_spellings_of_formats_versions_and_kv_dtypes(capsys, tmp_path, perf_points):
    from servekit.perf.points import kv_dtype, vllm_release
    from servekit.perf.shape import weights_format_of

    assert [weights_format_of(t) for t in ("bfloat16", "FP8_E4M3", "w4a16", "NVFP4", "mxfp4", "float16", "cobol")] == [
        "bf16", "fp8", "int4", "nvfp4", "mxfp4", "fp16", None]
    assert kv_dtype("fp8_e4m3") == "fp8_e4m3" and kv_dtype("FP8-dynamic") == "fp8" and kv_dtype(None) == "auto"
    assert vllm_release({"engine": "vllm", "engine_version": "v0.11.0"}) == "0.11.0"
    assert vllm_release({"engine": "vllm", "engine_version": "nightly of some day"}) is None
    base = _unmeasured(next(p for p in perf_points if p["engine"] == "vllm"))
    odd = {**base, "weights_precision": "bfloat16", "engine_version": "v0.11.0", "kv_cache_dtype": "bf16"}
    code, out = _run(capsys, tmp_path, [base, odd])
    assert code == 0 and out[0]["output_throughput_tok_s"] == out[1]["output_throughput_tok_s"]


def test_mla_widths_and_output_head_come_from_config_facts(perf_points):
    from servekit.perf.points import shape_facts

    mla = next(p for p in perf_points if p["config_facts"].get("kv_lora_rank"))
    cf = mla["config_facts"]
    shape = shape_facts(mla)
    assert shape.attention_dim == cf["qk_nope_head_dim"] + cf["qk_rope_head_dim"] + cf["v_head_dim"]
    assert shape.decode_width == 2 * cf["kv_lora_rank"] + cf["qk_rope_head_dim"]
    assert shape.vocab == cf["vocab_size"]
    dense = shape_facts(next(p for p in perf_points if not p["config_facts"].get("kv_lora_rank")))
    assert dense.decode_width == dense.attention_dim


def test_an_instinct_part_runs_at_its_measured_share(perf_points, profiles):
    from servekit.perf.constants import constant, fitted_values
    from servekit.perf.launch import rates_for, reserves_whole_output
    from servekit.perf.points import point_profile, shape_facts

    shape = shape_facts(next(p for p in perf_points if p["weights_precision"] == "bf16"))
    v = fitted_values()
    amd = rates_for(point_profile("mi300x", profiles), shape, "vllm")
    nv = rates_for(point_profile("h200", profiles), shape, "vllm")
    assert amd.memory == pytest.approx(5300e9 * v["bandwidth_fraction"] * constant("bandwidth_scale.amd"))
    assert nv.memory == pytest.approx(4800e9 * v["bandwidth_fraction"])
    assert amd.flops == pytest.approx(1307.4e12 * v["flops_fraction"] * constant("flops_scale.amd"))
    assert reserves_whole_output("trtllm") and not reserves_whole_output("vllm") and not reserves_whole_output("sglang")
    trt = rates_for(point_profile("h200", profiles), shape, "trtllm")
    assert trt.flops == pytest.approx(nv.flops * v["flops_scale.trtllm"]) and trt.memory == pytest.approx(nv.memory)
    assert rates_for(point_profile("h200", profiles), shape, "sglang").flops == pytest.approx(nv.flops)


def test_tensorrt_llm_follows_a_modelopt_checkpoints_fp8_kv_cache(perf_points, profiles):
    """TensorRT-LLM with no KV dtype takes the checkpoint's: FP8 for an FP8 or NVFP4 (ModelOpt)
    checkpoint, which halves a BF16 KV cache's bytes per token and so doubles the pool's tokens;
    vLLM and SGLang keep the weights' dtype, and a stated KV dtype is kept by every engine."""
    from servekit.perf.points import kv_pool, launch_kv_dtype, point_profile, shape_facts

    fp8 = next(p for p in perf_points if p["engine"] == "trtllm" and p["weights_precision"] == "fp8"
               and not p.get("kv_cache_dtype"))
    assert launch_kv_dtype(fp8) == "fp8"
    assert launch_kv_dtype({**fp8, "weights_precision": "nvfp4"}) == "fp8"
    assert launch_kv_dtype({**fp8, "weights_precision": "bf16"}) == "auto"
    assert launch_kv_dtype({**fp8, "kv_cache_dtype": "bf16"}) == "auto"  # stated: the weights' dtype, kept
    assert launch_kv_dtype({**fp8, "kv_cache_dtype": "auto"}) == "fp8"
    assert launch_kv_dtype({**fp8, "engine": "vllm"}) == "auto"
    assert launch_kv_dtype({**fp8, "engine": "sglang"}) == "auto"

    profile = point_profile(str(fp8["gpu"]), profiles)
    shape = shape_facts(fp8)
    own = kv_pool(fp8, shape, profile, 1, 1)
    stated = kv_pool({**fp8, "kv_cache_dtype": "bf16"}, shape, profile, 1, 1)
    assert own["kv_bytes_per_token"] * 2 == stated["kv_bytes_per_token"]
    assert own["kv_tokens"] > 1.9 * stated["kv_tokens"]


def test_the_pool_of_an_mxfp4_moe_on_a_gpu_before_hopper_leaves_room_for_marlins_padding(perf_points, profiles,
                                                                                           monkeypatch):
    """The line's weights precision reaches the memory model: MXFP4 experts on an A100 are laid out
    for Marlin (servekit.fit.mxfp4_layout), so the pool is smaller by the padding on each rank;
    on an H100 at TP 1 nothing is added (Triton pads each rank's width to 64, and 2880 is 45 x 64)."""
    from dataclasses import replace

    from servekit.facts.model import QuantFacts
    from servekit.fit.hardware import Device
    from servekit.fit.launch import LaunchSettings
    from servekit.fit.mxfp4_layout import mxfp4_padding_gib
    from servekit.fit.points import facts_from_point
    from servekit.perf.points import kv_pool, point_profile, shape_facts

    mxfp4 = next(p for p in perf_points if p["engine"] == "vllm" and p["weights_precision"] == "mxfp4"
                 and p["gpu"] == "a100")
    tp, profile, shape = int(mxfp4["tp"]), point_profile("a100", profiles), shape_facts(mxfp4)
    facts, _ = facts_from_point(mxfp4["config_facts"])
    padded = kv_pool(mxfp4, shape, profile, tp, 1)
    monkeypatch.setattr("servekit.fit.memory.layout_padding_gib", lambda *args: 0.0)
    plain = kv_pool(mxfp4, shape, profile, tp, 1)
    quantized = replace(facts, quantization=QuantFacts(method="mxfp4"))
    padding = mxfp4_padding_gib(quantized, LaunchSettings(tp=tp), Device(profile))
    assert padding > 0.5  # gpt-oss-20b on one A100: 0.85 GiB
    assert plain["available_kv_gib"] - padded["available_kv_gib"] == pytest.approx(padding, abs=0.01)
    hopper = point_profile("h100", profiles)
    assert mxfp4_padding_gib(quantized, LaunchSettings(tp=tp), Device(hopper)) == 0.0


def test_a_closed_loop_of_fixed_lengths_is_read_from_its_structured_field(capsys, tmp_path, perf_points):
    """``workload.fixed_lengths`` true puts a closed loop on the waves or cohort rule; absent, the
    lengths are a dataset's means; anything but true or false is that line's error."""
    base = _unmeasured(perf_points[0])
    loop = {**base["workload"], "concurrency": 64, "request_rate": None, "offline": False, "input_len": 1024}
    spread = {**base, "workload": loop}
    fixed = {**base, "workload": {**loop, "fixed_lengths": True}}
    wrong = {**base, "workload": {**loop, "fixed_lengths": "yes"}}
    code, out = _run(capsys, tmp_path, [spread, fixed, wrong])
    assert code == 0
    assert out[1]["ttft_ms"] > out[0]["ttft_ms"]  # the prompts overflow a step: cohorts wait for each other
    assert "line 3" in out[2]["error"] and "fixed_lengths" in out[2]["error"]


def test_a_stated_async_scheduling_switch_overlaps_the_host_work(capsys, tmp_path, perf_points):
    """``async_scheduling`` true on a vLLM release before 0.14.0 runs the host's work beside the
    device's (the step costs the longer of the two, not their sum); false or absent leaves it
    serial there; anything but true, false or null is that line's error."""
    base = {**_unmeasured(next(p for p in perf_points if p["engine"] == "vllm")), "engine_version": "0.11.0"}
    loop = {**base["workload"], "concurrency": 64, "request_rate": None, "offline": False}
    serial = {**base, "workload": loop}
    overlapped = {**serial, "async_scheduling": True}
    off = {**serial, "async_scheduling": False}
    wrong = {**serial, "async_scheduling": "yes"}
    code, out = _run(capsys, tmp_path, [serial, overlapped, off, wrong])
    assert code == 0
    assert out[1]["tpot_ms"] < out[0]["tpot_ms"] and out[2]["tpot_ms"] == out[0]["tpot_ms"]
    assert "line 4" in out[3]["error"] and "async_scheduling" in out[3]["error"]


def test_sglangs_stated_read_interval_and_continuous_decode_steps_delay_the_first_token(capsys, tmp_path,
                                                                                      perf_points):
    """``scheduler_recv_interval`` x ``num_continuous_decode_steps`` decode steps pass between two
    reads of new requests: an arrival waits half of the steps past the first for the next read
    (the TTFT alone moves); absent or null is every step; anything but a positive whole number is
    that line's error."""
    base = {**_unmeasured(perf_points[0]), "engine": "sglang", "engine_version": "0.5.3"}
    loop = {**base["workload"], "concurrency": 16, "request_rate": None, "offline": False}
    every = {**base, "workload": loop, "scheduler_recv_interval": None}
    thirty = {**every, "scheduler_recv_interval": 30}
    split = {**every, "scheduler_recv_interval": 10, "num_continuous_decode_steps": 3}
    wrong = {**every, "num_continuous_decode_steps": 0}
    code, out = _run(capsys, tmp_path, [every, thirty, split, wrong])
    assert code == 0
    assert out[1]["tpot_ms"] == out[0]["tpot_ms"] and out[1]["ttft_ms"] > out[0]["ttft_ms"]
    # 30 steps and 10 x 3 steps between reads wait alike
    assert out[2]["ttft_ms"] == pytest.approx(out[1]["ttft_ms"])
    assert "line 4" in out[3]["error"] and "num_continuous_decode_steps" in out[3]["error"]


def test_an_engine_is_read_in_its_common_spellings_and_an_unknown_one_is_refused(perf_points):
    """A line's engine is folded to the speed model's name (case, TensorRT-LLM's spellings, a vLLM
    fork as vLLM); an engine with no constants is an error line, never priced as vLLM."""
    import json

    from servekit.app.perf import predict_perf_points
    from servekit.perf.points import PerfError, point_engine

    assert [point_engine(e) for e in ("TensorRT-LLM", "trt-llm", "SGLang", "vLLM", "vllm-ascend")] == \
        ["trtllm", "trtllm", "sglang", "vllm", "vllm"]
    with pytest.raises(PerfError, match="no speed constants"):
        point_engine("lmdeploy")
    line = next(p for p in perf_points if p["engine"] == "trtllm")
    spelled, own, unknown = predict_perf_points(
        [json.dumps({**line, "engine": "TensorRT-LLM"}), json.dumps(line), json.dumps({**line, "engine": "tgi"})])
    assert spelled["output_throughput_tok_s"] == own["output_throughput_tok_s"]
    assert "engine: 'tgi' has no speed constants" in unknown["error"]


def test_tensorrt_llms_pool_is_its_free_fraction_of_what_the_model_leaves(perf_points, profiles):
    """TensorRT-LLM takes 0.9 of the memory left free once the model is in
    (``KvCacheConfig.free_gpu_memory_fraction``); vLLM budgets its default share of the whole device
    (0.92 from 0.20) and takes the model out of that, so TensorRT-LLM's pool is the larger exactly
    when the model holds more than (0.92 - 0.9) / (1 - 0.9) of the device: an 8B FP8 model on an
    H100 holds less, and gets the smaller pool under TensorRT-LLM."""
    from servekit.perf.points import TRTLLM_FREE_FRACTION, kv_pool, point_profile, shape_facts

    line = next(p for p in perf_points if p["engine"] == "trtllm" and p["gpu"] == "h100"
                and p.get("tp", 1) == 1 and p["weights_precision"] == "fp8")
    profile, shape = point_profile("h100", profiles), shape_facts(line)
    trt = kv_pool(line, shape, profile, 1, 1)
    vllm = kv_pool({**line, "engine": "vllm", "engine_version": None, "kv_cache_dtype": "fp8"}, shape, profile, 1, 1)
    share = VllmRun(None).default_utilization  # the newest vLLM release's default budget
    used = profile.memory_gib * share - vllm["available_kv_gib"]  # the model and its activations
    assert trt["available_kv_gib"] == pytest.approx(TRTLLM_FREE_FRACTION * (profile.memory_gib - used), rel=1e-3)
    crossover = (share - TRTLLM_FREE_FRACTION) / (1 - TRTLLM_FREE_FRACTION) * profile.memory_gib
    assert used < crossover and trt["kv_tokens"] < vllm["kv_tokens"]


def test_dp_inside_the_tp_group_is_data_parallel_attention_and_dp_beyond_it_replicas(perf_points, profiles):
    from servekit.perf.points import launch_of

    mla = next(p for p in perf_points if p["config_facts"].get("kv_lora_rank") and p["tp"] == 8)
    inside = launch_of({**mla, "tp": 8, "dp": 8, "gpu_count": 8}, profiles)
    assert (inside.layout.attention_dp, inside.replicas) == (8, 1)
    beyond = launch_of({**mla, "tp": 8, "dp": 2, "gpu_count": 16}, profiles)
    assert (beyond.layout.attention_dp, beyond.replicas) == (1, 2)
    plain = launch_of({**mla, "tp": 8, "dp": 1, "gpu_count": 8}, profiles)
    assert plain.layout.attention_dp == 1
    assert plain.rates.mla_seq_s > 0  # an MLA model on a GPU pays the fitted per-sequence decode cost
