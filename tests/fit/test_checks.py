""""Can it start" checks: divisibility, precision vs hardware, CPU head sizes, fit with a fix."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.facts import shipped_facts
from servekit.facts.config import facts_from_config
from servekit.fit.api import check_plan_fit
from servekit.fit.checks import (
    check_cpu_head_size,
    check_device_count,
    check_divisibility,
    check_precision,
)
from servekit.fit.hardware import custom_device, device_from_profile
from servekit.fit.launch import LaunchSettings

H200 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 1128}
H100 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 640}
RTX_5090 = {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1, "vram_gb": 32}
RTX_4090_2X = {"brand": "NVIDIA", "generation": "ada", "gpu_count": 2, "vram_gb": 48}
XEON = {"brand": "Intel", "generation": "cpu", "gpu_count": 4, "vram_gb": 1024}


def _codes(findings):
    return {f.code for f in findings if f.severity == "error"}


def test_multi_node_tp16_with_24_heads_is_an_error_with_a_fix():
    facts = shipped_facts("Qwen/Qwen3.8-27B")
    result = check_plan_fit(facts, H200, hardware_name="h200", tp=16, node_count=2)
    assert not result.ok
    finding = next(f for f in result.findings if f.code == "tp-attention-heads")
    assert "24 attention heads" in finding.message and "--tensor-parallel-size 8" in finding.fix


def test_kv_heads_must_split_or_replicate_evenly():
    facts = facts_from_config({"num_hidden_layers": 2, "num_attention_heads": 12, "num_key_value_heads": 3,
                               "head_dim": 64, "hidden_size": 768})
    assert "tp-kv-heads" in _codes(check_divisibility(facts, LaunchSettings(tp=2)))
    assert not _codes(check_divisibility(facts, LaunchSettings(tp=3)))
    assert not _codes(check_divisibility(facts, LaunchSettings(tp=6)))  # 2 ranks per KV head


def test_fp8_block_quant_needs_shards_on_block_boundaries():
    facts = facts_from_config({"num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 16,
                               "hidden_size": 2048, "intermediate_size": 4096, "num_experts": 64,
                               "moe_intermediate_size": 768,
                               "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})
    assert not _codes(check_divisibility(facts, LaunchSettings(tp=2)))  # 768/2 = 384 = 3 x 128
    bad = check_divisibility(facts, LaunchSettings(tp=4))  # 768/4 = 192
    assert "tp-block-quant" in _codes(bad)
    assert any("expert-parallel" in (f.fix or "") for f in bad)
    assert not _codes(check_divisibility(facts, LaunchSettings(tp=4, expert_parallel=True)))


def test_experts_must_divide_over_expert_parallel_ranks():
    facts = facts_from_config({"num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 4,
                               "hidden_size": 2048, "num_experts": 60})
    assert "ep-experts" in _codes(check_divisibility(facts, LaunchSettings(tp=8, expert_parallel=True)))


def test_linear_attention_heads_are_checked():
    facts = shipped_facts("Qwen/Qwen3.8-27B")
    assert "tp-linear-heads" in _codes(check_divisibility(facts, LaunchSettings(tp=32)))


def test_precision_against_hardware():
    hopper = device_from_profile("h100", H100)
    blackwell = device_from_profile("rtx_5090", RTX_5090)
    assert "precision-nvfp4" in _codes(check_precision("nvfp4", hopper))
    assert not check_precision("nvfp4", blackwell)
    assert not check_precision("fp8", hopper)
    ampere = device_from_profile("a100", {"brand": "NVIDIA", "generation": "ampere", "gpu_count": 8, "vram_gb": 640})
    assert [f.severity for f in check_precision("fp8", ampere)] == ["warning"]
    mi300 = device_from_profile("mi300x", {"brand": "AMD", "generation": "amd", "gpu_count": 8, "vram_gb": 1536})
    assert not check_precision("fp8", mi300)
    assert [f.code for f in check_precision(None, ampere, kv_cache_dtype="fp8")] == ["kv-fp8-arch"]
    assert [f.severity for f in check_precision("mxfp4", hopper)] == ["warning"]
    assert [f.severity for f in check_precision("nvfp4", mi300)] == ["error"]
    mi355 = device_from_profile("mi355x", {"brand": "AMD", "generation": "amd", "gpu_count": 8, "vram_gb": 2304})
    assert not check_precision("mxfp4", mi355)
    # a profile that states its formats is taken at its word; a device stating none is not checked
    stated = device_from_profile("mi300x", {"brand": "AMD", "generation": "amd", "gpu_count": 8, "vram_gb": 1536,
                                            "precisions": ["fp8", "mxfp4"]})
    assert not check_precision("mxfp4", stated)
    xpu = device_from_profile("arc_pro_b60", {"brand": "Intel", "generation": "xpu", "gpu_count": 4, "vram_gb": 96})
    assert not check_precision("nvfp4", xpu)
    unknown = custom_device(40.0)
    assert [f.severity for f in check_precision("nvfp4", unknown)] == ["error"]
    assert [f.code for f in check_precision(None, unknown, kv_cache_dtype="fp8")] == ["kv-fp8-arch"]


def test_cpu_backend_rejects_head_dim_16():
    tiny = facts_from_config({"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                              "head_dim": 16, "hidden_size": 64})
    assert "cpu-head-size" in _codes(check_cpu_head_size(tiny))
    assert not check_cpu_head_size(replace(tiny, head_dim=64))
    result = check_plan_fit(tiny, XEON, hardware_name="xeon6", engine="vllm-cpu")
    assert "cpu-head-size" in _codes(result.findings)


def test_more_ranks_than_devices():
    device = device_from_profile("rtx_4090_2x", RTX_4090_2X)
    assert "world-size" in _codes(check_device_count(LaunchSettings(tp=4), device))


def test_bf16_27b_on_one_5090_does_not_fit_and_says_why():
    result = check_plan_fit(shipped_facts("Qwen/Qwen3.8-27B"), RTX_5090, hardware_name="rtx_5090",
                            argv=["--max-model-len", "32768"])
    assert not result.ok
    assert [f.code for f in result.findings if f.severity == "error"] == ["fit-weights"]


def test_context_too_long_suggests_the_longest_that_fits():
    facts = shipped_facts("meta-llama/Llama-3.1-8B-Instruct")
    device = {"brand": "NVIDIA", "generation": "ampere", "gpu_count": 1, "vram_gb": 24}
    result = check_plan_fit(facts, device, hardware_name="rtx_3090", argv=["--max-model-len", "131072"])
    finding = next(f for f in result.findings if f.code == "fit-context")
    longest = result.report.longest_context
    assert 0 < longest < 131072
    assert f"--max-model-len {longest // 1024 * 1024}" in finding.fix
    # and the suggested length does fit
    fixed = check_plan_fit(facts, device, hardware_name="rtx_3090",
                           argv=["--max-model-len", str(longest // 1024 * 1024)])
    assert fixed.ok and fixed.report.max_concurrency >= 1


def test_hybrid_state_blocks_must_cover_max_num_seqs():
    facts = shipped_facts("Qwen/Qwen3.8-27B-FP8")
    pro = {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1, "vram_gb": 96}
    result = check_plan_fit(facts, pro, hardware_name="rtx_pro_6000",
                            argv=["--max-model-len", "262144", "--max-num-seqs", "4096"])
    finding = next(f for f in result.findings if f.code == "fit-linear-state")
    assert finding.severity == "error" and finding.fix.startswith("--max-num-seqs ")


@pytest.mark.parametrize("precision,ok", [("nvfp4", True), ("fp8", True)])
def test_check_plan_fit_reads_precision_from_quantization(precision, ok):
    facts = shipped_facts("Inferact/Qwen3.8-27B-NVFP4" if precision == "nvfp4" else "Qwen/Qwen3.8-27B-FP8")
    blackwell = {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 2, "vram_gb": 64}
    result = check_plan_fit(facts, blackwell, hardware_name="rtx_5090_2x", tp=2,
                            argv=["--max-model-len", "262144", "--kv-cache-dtype", "fp8"])
    assert result.ok is ok
    hopper = check_plan_fit(facts, H100, hardware_name="h100", tp=1)
    assert ("precision-nvfp4" in _codes(hopper.findings)) is (precision == "nvfp4")


def test_rounded_weight_figures_are_flagged():
    result = check_plan_fit(shipped_facts("RedHatAI/Qwen3.8-27B-INT4"), H100, hardware_name="h100",
                            argv=["--max-model-len", "32768"])
    assert any(f.code == "fit-approximate-weights" and f.severity == "note" for f in result.findings)
    exact = check_plan_fit(shipped_facts("Qwen/Qwen3.8-27B-FP8"), H100, hardware_name="h100")
    assert not any(f.code == "fit-approximate-weights" for f in exact.findings)


def test_a_separate_draft_network_is_noted_as_not_weighed():
    spec = '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'
    argv = ["--max-model-len", "8192", "--speculative-config", spec]
    result = check_plan_fit(shipped_facts("meta-llama/Llama-3.1-8B-Instruct"), H100, hardware_name="h100", argv=argv)
    notes = [f for f in result.findings if f.code == "fit-draft-weights"]
    assert len(notes) == 1 and "EAGLE3-LLaMA3.1" in notes[0].message and result.fits
    plain = check_plan_fit(shipped_facts("meta-llama/Llama-3.1-8B-Instruct"), H100, hardware_name="h100",
                           argv=["--max-model-len", "8192"])
    assert not [f for f in plain.findings if f.code == "fit-draft-weights"]
    # the head's attention layer shares the pool: fewer tokens than without the drafter
    assert result.report.kv_tokens < plain.report.kv_tokens
