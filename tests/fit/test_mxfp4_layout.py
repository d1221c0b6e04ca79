"""MXFP4 experts as vLLM lays them out per GPU: the padding of each backend (servekit.fit.mxfp4_layout).

The expected figures are the tensors ``Mxfp4MoEMethod.create_weights`` allocates, written out per
tensor here (gate-up and down weights, their scales and biases), not the module's formula."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from servekit.cli.app import main
from servekit.facts.config import facts_from_config
from servekit.facts.model import QuantFacts
from servekit.fit.hardware import custom_device, device_from_profile
from servekit.fit.launch import LaunchSettings
from servekit.fit.memory import rank_memory
from servekit.fit.mxfp4_layout import FLASHINFER_TRTLLM, MARLIN, TRITON, mxfp4_layout, mxfp4_padding_gib
from servekit.fit.planner import FitRequest, plan_fit

GIB = 1 << 30
LAYERS, EXPERTS, HIDDEN, WIDTH = 36, 128, 2880, 2880
CONFIG = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": HIDDEN,
    "num_hidden_layers": LAYERS, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
    "intermediate_size": WIDTH, "vocab_size": 201088, "num_local_experts": EXPERTS, "num_experts_per_tok": 4,
    "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * (LAYERS // 2),
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "mxfp4"},
}
GPT_OSS = facts_from_config(CONFIG, model_id="gpt-oss-like")
A100 = device_from_profile("a100", {"brand": "NVIDIA", "generation": "ampere", "gpu_count": 1, "vram_gb": 80})
L40S = device_from_profile("l40s", {"brand": "NVIDIA", "generation": "ada", "gpu_count": 1, "vram_gb": 48})
H100 = device_from_profile("h100", {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 1, "vram_gb": 80})
B200 = device_from_profile("b200", {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1, "vram_gb": 180})
RTX_5090 = device_from_profile("rtx_5090", {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1,
                                            "vram_gb": 32})


def expert_tensors(width: int, hidden: int) -> float:
    """Bytes of one expert's tensors as create_weights allocates them (uint8 data and scales, bf16
    biases); at an unpadded width a rank's share of the checkpoint's scales (720 / 32 at TP 4)."""
    w13_weight = 2 * width * (hidden // 2)
    w13_scale = 2 * width * (hidden / 32)
    w13_bias = 2 * width * 2
    w2_weight = hidden * (width // 2)
    w2_scale = hidden * (width / 32)
    w2_bias = hidden * 2
    return w13_weight + w13_scale + w13_bias + w2_weight + w2_scale + w2_bias


def test_one_ampere_gpu_pads_2880_to_3072_hidden_and_2944_wide():
    expected = LAYERS * EXPERTS * (expert_tensors(2944, 3072) - expert_tensors(WIDTH, HIDDEN)) / GIB
    assert mxfp4_padding_gib(GPT_OSS, LaunchSettings(), A100) == pytest.approx(expected)
    # 5.13 GiB: with the 61.09 GiB checkpoint, 66.22 GiB against the 65.97 GiB a vLLM 0.11.2 start-up
    # log with the Marlin MXFP4 backend reports (tonghuikang/blog, 2025-12-28-vllm-logs.md)
    assert expected == pytest.approx(5.13, abs=0.01)
    assert (61.09 + expected) / 65.97 - 1 == pytest.approx(0.0, abs=0.005)


def test_tensor_parallel_pads_each_ranks_width_and_expert_parallel_splits_the_experts():
    tp2 = LAYERS * EXPERTS * (expert_tensors(1536, 3072) - expert_tensors(1440, HIDDEN)) / GIB  # 1440 -> 1536
    assert mxfp4_padding_gib(GPT_OSS, LaunchSettings(tp=2), L40S) == pytest.approx(tp2)
    ep = LAYERS * (EXPERTS // 2) * (expert_tensors(2944, 3072) - expert_tensors(WIDTH, HIDDEN)) / GIB
    assert mxfp4_padding_gib(GPT_OSS, LaunchSettings(tp=2, expert_parallel=True), L40S) == pytest.approx(ep)
    # a pipeline stage holds its own layers' experts: 18 of 36 at PP 2
    half = mxfp4_padding_gib(GPT_OSS, LaunchSettings(pp=2), A100)
    assert half == pytest.approx(mxfp4_padding_gib(GPT_OSS, LaunchSettings(), A100) / 2)


def test_the_layout_follows_the_compute_capability():
    assert mxfp4_layout(GPT_OSS, A100) == MARLIN and mxfp4_layout(GPT_OSS, L40S) == MARLIN
    assert mxfp4_layout(GPT_OSS, custom_device(23.58, generation="ampere")) == MARLIN
    assert mxfp4_layout(GPT_OSS, B200) == FLASHINFER_TRTLLM
    # the least any of their backends pads: Triton's (Marlin, where it runs, pads more)
    assert mxfp4_layout(GPT_OSS, H100) == TRITON and mxfp4_layout(GPT_OSS, RTX_5090) == TRITON
    assert mxfp4_layout(GPT_OSS, custom_device(23.58)) is None  # no known compute capability
    assert mxfp4_layout(GPT_OSS, custom_device(191.98, brand="AMD")) is None
    assert mxfp4_layout(replace(GPT_OSS, quantization=QuantFacts(method="fp8")), A100) is None
    assert mxfp4_layout(replace(GPT_OSS, quantization=None), A100) is None


def test_blackwell_pads_both_sizes_to_256_and_triton_only_each_ranks_width_to_64():
    b200 = LAYERS * EXPERTS * (expert_tensors(3072, 3072) - expert_tensors(WIDTH, HIDDEN)) / GIB
    assert mxfp4_padding_gib(GPT_OSS, LaunchSettings(), B200) == pytest.approx(b200)
    assert mxfp4_padding_gib(GPT_OSS, LaunchSettings(), H100) == 0.0  # 2880 is 45 x 64
    tp4 = LAYERS * EXPERTS * (expert_tensors(768, HIDDEN) - expert_tensors(720, HIDDEN)) / GIB  # 720 -> 768
    assert mxfp4_padding_gib(GPT_OSS, LaunchSettings(tp=4), H100) == pytest.approx(tp4)


def test_the_rank_holds_the_padding_unless_the_weights_are_the_engines_own_figure():
    launch = LaunchSettings(max_model_len=8192)
    padding = mxfp4_padding_gib(GPT_OSS, launch, A100)
    assert rank_memory(GPT_OSS, launch, A100, weights_gib=61.0).weights == pytest.approx(61.0 + padding)
    assert rank_memory(GPT_OSS, launch, A100, weights_gib=65.97, weights_as_loaded=True).weights == 65.97
    assert rank_memory(GPT_OSS, launch, H100, weights_gib=61.0).weights == pytest.approx(61.0)  # nothing at TP 1


def test_the_fit_report_names_what_the_load_adds(tmp_path, capsys):
    launch = LaunchSettings(max_model_len=8192)
    ampere = plan_fit(FitRequest(GPT_OSS, A100, launch, weights_gib_per_rank=61.09))
    padding = mxfp4_padding_gib(GPT_OSS, launch, A100)
    assert ampere.weights_added == (("MXFP4 experts padded for Marlin", padding),)
    assert ampere.weights_gib_per_rank == pytest.approx(61.09 + padding)
    assert ampere.to_dict()["weights_added"] == {"MXFP4 experts padded for Marlin": round(padding, 4)}
    assert plan_fit(FitRequest(GPT_OSS, H100, launch, weights_gib_per_rank=61.09)).weights_added == ()
    # and the CLI says it, beside the weights it is part of
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    assert main(["fit", str(tmp_path / "config.json"), "--hardware", "a100", "--max-model-len", "8192"]) == 0
    out = capsys.readouterr().out
    assert f"{padding:.2f} of them MXFP4 experts padded for Marlin" in out
