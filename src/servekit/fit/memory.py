"""What a rank spends before the KV cache: weights, activation peak, runtime overheads.

The activation model follows vLLM's start-up profile: a dummy forward over
``max_num_batched_tokens`` tokens and a dummy sampler pass over ``max_num_seqs`` rows of logits.
Constants were fitted to measured start-up logs (the kv-points reference set); they are
estimates, so every plan reports them separately.
"""

from __future__ import annotations

from dataclasses import dataclass

from servekit.facts.model import ModelFacts
from servekit.fit.launch import LaunchSettings
from servekit.fit.versions import counts_cudagraphs

GIB = 1 << 30
LARGE_DEVICE_GIB = 70.0
"""vLLM raises its scheduling defaults on devices with at least this much memory."""
SAMPLER_BYTES_PER_LOGIT = 12
FORWARD_BYTES_PER_TOKEN_HIDDEN = 24
NON_TORCH_GIB = 0.15
COLLECTIVES_GIB = 0.25
ENCODER_PROFILE_GIB = 0.15
CUDAGRAPH_BASE_GIB = 0.95
CUDAGRAPH_PER_SEQ_GIB = 0.0095
CUDAGRAPH_MAX_CAPTURE = 512
DEFAULT_VOCAB = 128_000
DEFAULT_HIDDEN = 4096


@dataclass(frozen=True)
class RankMemory:
    """GiB per rank."""

    weights: float
    activation: float
    runtime: float
    cudagraph: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.activation + self.runtime + self.cudagraph


def default_max_num_seqs(device_gib: float) -> int:
    return 1024 if device_gib >= LARGE_DEVICE_GIB else 256


def default_max_num_batched_tokens(device_gib: float) -> int:
    return 8192 if device_gib >= LARGE_DEVICE_GIB else 2048


def loaded_weight_bytes(facts: ModelFacts, launch: LaunchSettings) -> int | None:
    """Bytes the engine loads: the checkpoint, less the vision tower when serving text only and
    less the MTP head unless it drafts."""
    if facts.weights is None:
        return None
    loaded = facts.weights.total
    if launch.language_model_only:
        loaded -= facts.weights.vision
    if not launch.uses_mtp:
        loaded -= facts.weights.mtp
    return loaded


def weights_gib_per_rank(facts: ModelFacts, launch: LaunchSettings) -> float | None:
    loaded = loaded_weight_bytes(facts, launch)
    if loaded is None:
        return None
    return loaded / (launch.tp * launch.pp) / GIB


def activation_gib(facts: ModelFacts, launch: LaunchSettings, device_gib: float) -> float:
    seqs = launch.max_num_seqs or default_max_num_seqs(device_gib)
    tokens = launch.max_num_batched_tokens or default_max_num_batched_tokens(device_gib)
    vocab = facts.vocab_size or DEFAULT_VOCAB
    hidden = facts.hidden_size or DEFAULT_HIDDEN
    sampler = vocab * seqs * SAMPLER_BYTES_PER_LOGIT
    forward = tokens * hidden * FORWARD_BYTES_PER_TOKEN_HIDDEN
    encoder = ENCODER_PROFILE_GIB * GIB if facts.has_vision and not launch.language_model_only else 0
    return (sampler + forward + encoder) / GIB


def runtime_gib(launch: LaunchSettings) -> float:
    parallel = launch.tp * launch.pp > 1
    return NON_TORCH_GIB + (COLLECTIVES_GIB if parallel else 0.0)


def cudagraph_gib(launch: LaunchSettings, device_gib: float) -> float:
    if launch.enforce_eager:
        return 0.0
    seqs = min(launch.max_num_seqs or default_max_num_seqs(device_gib), CUDAGRAPH_MAX_CAPTURE)
    return CUDAGRAPH_BASE_GIB + CUDAGRAPH_PER_SEQ_GIB * seqs


def rank_memory(
    facts: ModelFacts,
    launch: LaunchSettings,
    device_gib: float,
    weights_gib: float | None = None,
    engine_version: str | None = None,
) -> RankMemory:
    weights = weights_gib if weights_gib is not None else weights_gib_per_rank(facts, launch)
    return RankMemory(
        weights=weights or 0.0,
        activation=activation_gib(facts, launch, device_gib),
        runtime=runtime_gib(launch),
        cudagraph=cudagraph_gib(launch, device_gib) if counts_cudagraphs(engine_version) else 0.0,
    )
