"""FP8 checkpoints on NVIDIA GPUs without FP8 tensor cores (Ampere and older).

vLLM still serves them, weight-only, through the Marlin kernels (``WEIGHT_ONLY_FALLBACK`` of
``servekit.hardware.precision``). At load time ``prepare_fp8_layer_for_marlin``
(``vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py``) repacks each FP8 weight
(the same bytes, as int32 words) and re-lays its scales as Marlin group scales:

* block-scaled checkpoints (``weight_block_size`` ``[n, k]``, one fp32 scale per ``n x k`` block)
  get one scale in the model dtype (``layer.orig_dtype``, ``marlin_scale_bytes``) per ``k``
  input rows and per output column instead of one float32 per block (``fp8_block_scale_bytes``);
* channel- and tensor-wise scales become one row per layer: nothing worth counting.

So a rank that loads ``W`` bytes of FP8 linears holds ``W x (2 / k - 4 / (n x k))`` bytes more
than the checkpoint, which ``Model loading took`` includes: 1.5% of the weights for 128 x 128
blocks (a dual RTX 3090 launch of a 27B FP8 checkpoint logs 14.68 GiB per rank against 14.38 GiB
of checkpoint; noonghunna/club-3090 issues #602 and #751).

The FP8 linears' bytes are the rank's weights less its share of the embedding and the LM head
(kept in the model dtype) when the facts give the vocabulary and hidden sizes; otherwise all of
the rank's weights (an upper bound: norms and a vision tower stay in the model dtype too).
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.constants import value
from servekit.fit.conversion import vocab_matrix_bytes
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.sharding import GIB
from servekit.hardware.precision import runs_natively


def fp8_weight_only(device: Device) -> bool:
    """Whether FP8 linears run weight-only through Marlin on this device: an NVIDIA GPU of a known
    generation that does not compute FP8 (an unknown generation is not assumed to lack it)."""
    profile = device.profile
    return (profile.platform == "cuda" and profile.brand.lower() == "nvidia" and bool(profile.generations)
            and not runs_natively(profile, "fp8"))


def fp8_block(facts: ModelFacts) -> tuple[int, int] | None:
    """(n, k) of a block-scaled FP8 checkpoint's scale blocks; None for other checkpoints and
    for FP8 scaled per channel or per tensor."""
    quant = facts.quantization
    if quant is None:
        return None
    words = f"{quant.method} {quant.algo or ''}".lower()
    block = quant.weight_block_size
    if "fp8" not in words or not block or len(block) != 2:
        return None
    return int(block[0]), int(block[1])


def fp8_linear_gib(facts: ModelFacts, launch: LaunchSettings, weights_gib: float) -> float:
    """GiB of FP8 linears among a rank's ``weights_gib``: less the embedding and the LM head when
    the facts give their sizes."""
    kept = 2 * vocab_matrix_bytes(facts) / launch.tp / launch.pp / GIB
    return max(0.0, weights_gib - kept)


def marlin_scale_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, weights_gib: float) -> float:
    """What the Marlin re-layout of the scales adds to a rank's checkpoint weights (0 when the
    device runs FP8 natively or the checkpoint is not block-scaled FP8)."""
    block = fp8_block(facts)
    if block is None or not fp8_weight_only(device):
        return 0.0
    n, k = block
    per_element = value("marlin_scale_bytes") / k - value("fp8_block_scale_bytes") / (n * k)
    return fp8_linear_gib(facts, launch, weights_gib) * per_element
