"""The Qwen3.8-27B recipe guide's measured KV pools on RTX 5090 (1x and 2x).

The guide was measured on vLLM 0.26.1rc1; the plans here follow that version's accounting
(``servekit.fit.versions``: CUDA-graph memory is taken out of the budget from 0.21, and a launch
without ``--gpu-memory-utilization`` budgets the release's default, 0.92 from 0.20: the guide's
commands pass none). Tolerances are relative to the logged pool:

* 2x RTX 5090, TP2, 262,144 context, MTP (3 draft tokens): within 6%. The FP8 and Inferact NVFP4
  rows match bf16 KV arithmetic, not fp8 (at fp8 the same memory would hold about twice the
  tokens; the unsloth row does match fp8), so they are planned with ``--kv-cache-dtype auto``:
  a documented outlier of the guide's table, which names fp8 for all three.
* 1x RTX 5090, TP1, 32,768 context, ``--enforce-eager``: the pools are small (3-6 GiB), so the
  estimated vision-tower and MTP shares of the checkpoint weigh more here. Both are counted from
  their shapes (the tower's ``vision_config``; one decoder layer and the fc projection for the MTP
  head), in bf16, and the facts mark them ``estimated``; neither is taken from these pools, which
  the plan misses by 8-9% (0.3 GiB of a 3.6 GiB pool); rows past 8% are strict xfails, with what
  would settle them.
* The MTP row of the 1x card (90,112 tokens) does not say which of the other levers were on; it
  is checked within 15% with all of them.
* The pools are laid out with prefix caching on (two state blocks per linear-attention group and
  request): the 1x rows' 135,926 and 152,917 tokens are whole blocks only that way. This main-branch
  build already had vllm-project/vllm#50991 (prefix caching by default for hybrid models), which
  tagged releases carry from 0.28.0; servekit reads a development build as the release it names, so
  the plans here state ``--enable-prefix-caching``.
"""

from __future__ import annotations

import shlex

import pytest

from servekit.facts import shipped_facts
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import launch_settings
from servekit.fit.planner import FitRequest, plan_fit

GUIDE_VERSION = "0.26.1rc1.dev608+g99a10304d"
RTX_5090 = {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1, "vram_gb": 32}
RTX_5090_2X = {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 2, "vram_gb": 64}
MTP = """ --speculative-config '{"method":"mtp","num_speculative_tokens":3}'"""
ONE_CARD = "-tp 1 --max-model-len 32768 --enforce-eager --enable-prefix-caching"


def _pool(checkpoint: str, profile: dict, argv: str) -> int:
    device = device_from_profile("rtx_5090", profile)
    launch = launch_settings(shlex.split(argv))
    report = plan_fit(FitRequest(shipped_facts(checkpoint), device, launch, engine_version=GUIDE_VERSION))
    return report.kv_tokens


def test_one_5090_is_31_4_gib_usable():
    assert device_from_profile("rtx_5090", RTX_5090).memory_gib == pytest.approx(31.4)


TWO_CARD_GAP = (
    "planned {gap} below the guide's pool (about 2.4 GiB of the ~15 GiB each card's pool held): of the terms "
    "taken out of each card's budget, the CUDA-graph "
    "estimate (1.6 GiB: 64 layers x 51 capture sizes at the per-layer cost measured on dense H100 "
    "launches, not vLLM's own first-capture + per-graph profile of FULL_AND_PIECEWISE hybrid graphs) and "
    "the dummy rejection-sampler pass over 256 x 248,320 logits (1.4 GiB) are not checked against any "
    "hybrid consumer-GPU launch; one of them overstates what 0.26.1rc1 took"
)


UNSLOTH_LAYOUT = (
    "; besides, this row's pool is laid out without the drafter and with prefix caching: 920,517 tokens at "
    "262,144 are 611 blocks over 174 per request (168 for 16 full-attention layers at 1,568-token blocks, two "
    "state blocks for each of 3 linear groups), so the row's MTP flags may not be what it ran"
)

@pytest.mark.parametrize("checkpoint,kv,logged", [
    pytest.param("Qwen/Qwen3.8-27B-FP8", "auto", 377_456,
                 marks=pytest.mark.xfail(strict=True, reason=TWO_CARD_GAP.format(gap="17%"))),
    pytest.param("Inferact/Qwen3.8-27B-NVFP4", "auto", 445_875,
                 marks=pytest.mark.xfail(strict=True, reason=TWO_CARD_GAP.format(gap="16%"))),
    pytest.param("unsloth/Qwen3.8-27B-NVFP4", "fp8", 920_517,
                 marks=pytest.mark.xfail(strict=True, reason=TWO_CARD_GAP.format(gap="12%") + UNSLOTH_LAYOUT)),
])
def test_two_5090_table(checkpoint, kv, logged):
    argv = f"-tp 2 --max-model-len 262144 --enable-prefix-caching --kv-cache-dtype {kv}" + MTP
    assert _pool(checkpoint, RTX_5090_2X, argv) == pytest.approx(logged, rel=0.06)


ONE_CARD_GAP = (
    "planned 8-9% below the guide's pool (about 0.3 GiB of the 3.6 GiB the card's pool held): the vision "
    "tower and the MTP head are counted from their shapes in bf16 (0.92 GB and 0.85 GB, marked estimated), "
    "and their safetensors headers would settle what they weigh; the 24.6 GiB the guide quotes for the "
    "NVFP4 weights does not say what it includes (bench/gpu_fit_check.sh measures the terms)"
)


@pytest.mark.parametrize("extra,logged", [
    pytest.param("--kv-cache-dtype fp8", 91_022, marks=pytest.mark.xfail(strict=True, reason=ONE_CARD_GAP)),
    pytest.param("--kv-cache-dtype fp8 --language-model-only", 135_926,
                 marks=pytest.mark.xfail(strict=True, reason=ONE_CARD_GAP)),
    ("--kv-cache-dtype fp8 --language-model-only --max-num-seqs 8", 152_917),
    pytest.param("--kv-cache-dtype auto --language-model-only", 76_458,
                 marks=pytest.mark.xfail(strict=True, reason=ONE_CARD_GAP)),
])
def test_one_5090_levers(extra, logged):
    assert _pool("Inferact/Qwen3.8-27B-NVFP4", RTX_5090, f"{ONE_CARD} {extra}") == pytest.approx(logged, rel=0.08)


def test_vision_and_mtp_shares_are_marked_estimated():
    weights = shipped_facts("Inferact/Qwen3.8-27B-NVFP4").weights
    assert weights is not None and set(weights.estimated) == {"vision", "mtp"}


def test_one_5090_levers_move_the_pool_the_right_way():
    base = _pool("Inferact/Qwen3.8-27B-NVFP4", RTX_5090, ONE_CARD + " --kv-cache-dtype fp8")
    text_only = _pool("Inferact/Qwen3.8-27B-NVFP4", RTX_5090, ONE_CARD + " --kv-cache-dtype fp8 --language-model-only")
    capped = _pool("Inferact/Qwen3.8-27B-NVFP4", RTX_5090,
                   ONE_CARD + " --kv-cache-dtype fp8 --language-model-only --max-num-seqs 8")
    bf16 = _pool("Inferact/Qwen3.8-27B-NVFP4", RTX_5090, ONE_CARD + " --kv-cache-dtype auto --language-model-only")
    assert base < text_only < capped and bf16 < text_only


def test_one_5090_mtp_row():
    argv = f"{ONE_CARD} --kv-cache-dtype fp8 --language-model-only --max-num-seqs 8" + MTP
    assert _pool("Inferact/Qwen3.8-27B-NVFP4", RTX_5090, argv) == pytest.approx(90_112, rel=0.15)


def test_bf16_does_not_fit_one_5090_but_nvfp4_does():
    device = device_from_profile("rtx_5090", RTX_5090)
    launch = launch_settings(shlex.split(ONE_CARD + " --kv-cache-dtype fp8"))
    assert not plan_fit(FitRequest(shipped_facts("Qwen/Qwen3.8-27B"), device, launch)).fits
    assert plan_fit(FitRequest(shipped_facts("Inferact/Qwen3.8-27B-NVFP4"), device, launch)).fits


def test_headline_pool_at_one_million_tokens_on_gb300():
    """"NVFP4 in 24.6 GiB, 6.6M KV tokens at 1M context": one GB300, TP1, verified on a main-branch
    build (0.1.dev19754: an untagged build names no release, so the newest accounting applies, as for
    no version). The headline does not list the flags; fp8 KV with the
    MTP head drafting 3 tokens (as the gb300 verification ran) gives it within 5%."""
    gb300 = {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 4, "vram_gb": 1152}
    device = device_from_profile("gb300", gb300)
    launch = launch_settings(shlex.split("-tp 1 --max-model-len 1000000 --kv-cache-dtype fp8" + MTP))
    report = plan_fit(FitRequest(shipped_facts("Inferact/Qwen3.8-27B-NVFP4"), device, launch, engine_version=None))
    assert report.kv_tokens == pytest.approx(6_600_000, rel=0.05)
