"""MXFP4 experts as vLLM lays them out per NVIDIA GPU: the padding its MoE kernels ask for.

vLLM picks an MXFP4 mixture-of-experts backend (gpt-oss) by the GPU's compute capability, and
``Mxfp4MoEMethod.create_weights`` (``vllm/model_executor/layers/quantization/mxfp4.py``; from
late 2025 ``mxfp4_round_up_hidden_size_and_intermediate_size``) pads each rank's expert width
(``intermediate_size_per_partition``) and the hidden size up to what that backend takes, then
allocates, per expert, the packed gate-up and down weights (half a byte per weight), their uint8
scales (one per 32 weights) and their BF16 biases at the padded sizes. The checkpoint's bytes load
into the unpadded corner, so a rank holds the padding on top of them (the repacks that follow
keep the bytes of the weights and of the e8m0 scales):

* compute capability below 9.0 (Ampere, Ada): Marlin only, in every release (the Triton kernels'
  path needs 9.0, FlashInfer's MXFP4 paths are for SM90 and SM100): the width to a multiple of
  128, the hidden size to 256 (the Marlin MoE kernel takes n % 256 == 0 and k % 128 == 0);
* SM100 and SM103 (B200, B300, GB200, GB300): FlashInfer's TRT-LLM kernels, the default of
  ``select_mxfp4_moe_backend`` and of earlier releases wherever FlashInfer is installed (vLLM's
  images ship it): both to a multiple of 256;
* SM90 and SM12x: Triton (the width to a multiple of 64, the hidden size kept), the least any
  of their backends pads: SM90 takes Marlin where the Triton kernels are not installed, SM12x
  took Marlin in releases that kept it off the Triton kernels, and both pad more there.

gpt-oss-120b (hidden size and expert width 2880, 128 experts in each of 36 layers) takes 2880 ->
3072 and 2880 -> 2944 for Marlin on one GPU: 5.13 GiB over its 61.09 GiB checkpoint. A vLLM 0.11.2
start-up log with the Marlin MXFP4 backend logs 65.97 GiB of weights (kv-points line 48): 0.4%
below the 66.22 predicted. Other platforms (ROCm's alignment is the build's) are counted at the
checkpoint's size.
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.sharding import GIB, pp_stage_layers
from servekit.records import record

WEIGHTS_PER_SCALE = 32
"""MXFP4: one uint8 scale per 32 weights."""
BIAS_BYTES = 2
"""The experts' biases are BF16 (``w13_bias``, ``w2_bias``)."""


@record
class Mxfp4Layout:
    """The backend vLLM lays MXFP4 experts out for on a GPU, and the multiples it pads to."""

    backend: str
    width_align: int
    """Each rank's expert width is padded to a multiple of this."""
    hidden_align: int
    """The hidden size is padded to a multiple of this (1: kept)."""


MARLIN = Mxfp4Layout("Marlin", 128, 256)
FLASHINFER_TRTLLM = Mxfp4Layout("FlashInfer TRT-LLM", 256, 256)
TRITON = Mxfp4Layout("Triton", 64, 1)
NATIVE_FROM = 90
"""The lowest compute capability with an MXFP4 MoE path other than Marlin (Triton kernels: 9.0)."""
FLASHINFER_FAMILY = (100, 103)
"""Compute capabilities of the SM100 family, where FlashInfer's TRT-LLM MXFP4 kernels are the default."""


def _round_up(n: int, align: int) -> int:
    return -(-n // align) * align


def _capability(device: Device) -> int | None:
    """The device's CUDA compute capability as an integer (``cuda:sm_89`` -> 89); None elsewhere."""
    target = device.profile.compute_target or ""
    api, _, arch = target.partition(":sm_")
    return int(arch) if api == "cuda" and arch.isdigit() else None


def mxfp4_layout(facts: ModelFacts, device: Device) -> Mxfp4Layout | None:
    """How vLLM lays this checkpoint's experts out on this device; None when the checkpoint has no
    MXFP4 experts or the device is not an NVIDIA GPU of a known compute capability."""
    quant = facts.quantization
    capability = _capability(device)
    if quant is None or quant.method.lower() != "mxfp4" or facts.moe is None or capability is None:
        return None
    if capability < NATIVE_FROM:
        return MARLIN
    return FLASHINFER_TRTLLM if capability in FLASHINFER_FAMILY else TRITON


def expert_bytes_at(width: int, hidden: int) -> float:
    """Bytes of one MXFP4 expert of ``width`` x ``hidden``: gate-up (2 x width rows) and down
    weights at half a byte, their scales, and their BF16 biases."""
    weights = 3 * width * hidden
    return weights / 2 + weights / WEIGHTS_PER_SCALE + (2 * width + hidden) * BIAS_BYTES


def _moe_layers_per_rank(facts: ModelFacts, launch: LaunchSettings) -> int:
    moe = facts.moe
    assert moe is not None
    moe_layers = facts.expert_layers()
    if launch.pp <= 1 or facts.num_layers < launch.pp:
        return moe_layers
    return min(moe_layers, max(pp_stage_layers(facts.num_layers, launch.pp)))


def mxfp4_padding_gib(facts: ModelFacts, launch: LaunchSettings, device: Device) -> float:
    """What the device's layout pads a rank's MXFP4 experts by (0 where no layout is known)."""
    layout = mxfp4_layout(facts, device)
    return layout_padding_gib(facts, launch, layout) if layout is not None else 0.0


def layout_padding_gib(facts: ModelFacts, launch: LaunchSettings, layout: Mxfp4Layout) -> float:
    """What ``layout``'s padding adds to a rank's MXFP4 experts (0 where the config lacks the sizes)."""
    moe = facts.moe
    assert moe is not None
    width_total = moe.moe_intermediate_size or facts.intermediate_size
    hidden = facts.hidden_size
    if not width_total or not hidden:
        return 0.0
    if launch.expert_parallel:
        experts, width = -(-moe.num_experts // (launch.tp * launch.dp)), width_total
    else:
        experts, width = moe.num_experts, width_total // launch.tp
    padded = expert_bytes_at(_round_up(width, layout.width_align), _round_up(hidden, layout.hidden_align))
    extra = padded - expert_bytes_at(width, hidden)
    return _moe_layers_per_rank(facts, launch) * experts * extra / GIB
