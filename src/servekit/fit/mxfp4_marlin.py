"""MXFP4 experts on NVIDIA GPUs before Hopper: the padding of vLLM's Marlin layout.

vLLM serves an MXFP4 mixture-of-experts checkpoint (gpt-oss) on a GPU of compute capability 8.x
(Ampere, Ada) through the Marlin kernels only: its Triton-kernels path needs capability 9.0 or
more, and its FlashInfer MXFP4 paths are built for SM90 and SM100 (``get_mxfp4_backend`` in
``vllm/model_executor/layers/quantization/mxfp4.py``). For Marlin, ``Mxfp4MoEMethod.create_weights``
rounds each rank's expert width (``intermediate_size_per_partition``) up to a multiple of 128 and the
hidden size up to a multiple of 256 (the Marlin MoE kernel takes n % 256 == 0 and k % 128 == 0),
then allocates, per expert, the packed gate-up and down weights (half a byte per weight), their
uint8 scales (one per 32 weights) and their BF16 biases at the padded sizes. The checkpoint's bytes
load into the unpadded corner, so the rank holds the padding on top of them; the Marlin repack
keeps the bytes of both the weights and the e8m0 scales.

gpt-oss-120b (hidden size and expert width 2880, 128 experts in each of 36 layers) takes 2880 ->
3072 and 2880 -> 2944 on one GPU: 5.13 GiB over its 61.09 GiB checkpoint. A vLLM 0.11.2 start-up
log with the Marlin MXFP4 backend logs 65.97 GiB of weights (kv-points line 48): 0.4% below the
66.22 predicted.

Hopper and later GPUs choose among Triton, FlashInfer and Marlin by what the environment has
installed (``has_triton_kernels``, ``has_flashinfer``), which a plan does not know: their loaded
weights are counted as the checkpoint's, a stated limit.
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.sharding import GIB, pp_stage_layers

HIDDEN_ALIGN = 256
"""Marlin MoE: the hidden size (n of the down projection) padded to a multiple of this."""
WIDTH_ALIGN = 128
"""Marlin MoE: each rank's expert width (k of the down projection) padded to a multiple of this."""
WEIGHTS_PER_SCALE = 32
"""MXFP4: one uint8 scale per 32 weights."""
BIAS_BYTES = 2
"""The experts' biases are BF16 (``w13_bias``, ``w2_bias``)."""
FIRST_NATIVE_CAPABILITY = 90
"""The lowest compute capability with an MXFP4 MoE path other than Marlin (Triton kernels: 9.0)."""


def _round_up(n: int, align: int) -> int:
    return -(-n // align) * align


def _capability(device: Device) -> int | None:
    """The device's CUDA compute capability as an integer (``cuda:sm_89`` -> 89); None elsewhere."""
    target = device.profile.compute_target or ""
    api, _, arch = target.partition(":sm_")
    return int(arch) if api == "cuda" and arch.isdigit() else None


def marlin_mxfp4(facts: ModelFacts, device: Device) -> bool:
    """Whether vLLM lays this checkpoint's experts out for Marlin on this device: an MXFP4 MoE
    checkpoint on an NVIDIA GPU of compute capability below 9.0."""
    quant = facts.quantization
    capability = _capability(device)
    return (quant is not None and quant.method.lower() == "mxfp4" and facts.moe is not None
            and capability is not None and capability < FIRST_NATIVE_CAPABILITY)


def expert_bytes_at(width: int, hidden: int) -> float:
    """Bytes of one MXFP4 expert of ``width`` x ``hidden``: gate-up (2 x width rows) and down
    weights at half a byte, their scales, and their BF16 biases."""
    weights = 3 * width * hidden
    return weights / 2 + weights / WEIGHTS_PER_SCALE + (2 * width + hidden) * BIAS_BYTES


def _moe_layers_per_rank(facts: ModelFacts, launch: LaunchSettings) -> int:
    moe = facts.moe
    assert moe is not None
    moe_layers = max(0, facts.num_layers - moe.dense_layers)
    if launch.pp <= 1 or facts.num_layers < launch.pp:
        return moe_layers
    return min(moe_layers, max(pp_stage_layers(facts.num_layers, launch.pp)))


def mxfp4_marlin_padding_gib(facts: ModelFacts, launch: LaunchSettings, device: Device) -> float:
    """What the Marlin layout's padding adds to a rank's MXFP4 experts (0 where vLLM does not lay
    them out for Marlin, or the config lacks the sizes)."""
    if not marlin_mxfp4(facts, device):
        return 0.0
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
    padded = expert_bytes_at(_round_up(width, WIDTH_ALIGN), _round_up(hidden, HIDDEN_ALIGN))
    extra = padded - expert_bytes_at(width, hidden)
    return _moe_layers_per_rank(facts, launch) * experts * extra / GIB
