"""What a rank spends before the KV cache, term by term as vLLM's start-up profile counts it.

``gpu_worker.determine_available_memory`` sizes the pool as ``requested memory - weights -
activation peak - non-torch memory [- CUDA-graph estimate]``:

* weights: the bytes loaded on the rank (checkpoint, less the vision tower when serving text
  only and the MTP head unless it drafts), split over TP x PP;
* activation peak: the profile run's largest transient (``profile_run``): the multimodal
  encoder's dummy batch (``servekit.fit.encoder``), whose outputs stay in the encoder cache while
  a forward pass over the profiled tokens runs (with a drafter, its dummy pass runs while the
  target's output is still held) and then the dummy sampler pass over ``max_num_seqs`` rows of
  logits (with speculative decoding, the rejection sampler's pass);
* non-torch: CUDA context and workspaces, plus communication buffers when ranks talk;
* CUDA graphs: counted only by releases that take them out of the budget.

Linear-attention (Gated DeltaNet) layers add no term of their own: during the profile run the
forward context carries no attention metadata, so ``_forward_core`` of
``vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py`` returns before the chunked
kernels run (it only warms them up on 64 tokens). Their projections (``in_proj_qkvz``,
``core_attn_out``, the gated norm) are narrower than the MLP's ``gate_up`` output, so the
per-layer peak stays the MLP's. The recurrent state is part of the KV pool, not of this budget.

Every number comes from ``servekit.fit.constants``; release-dependent rules from
``servekit.fit.versions``.
"""

from __future__ import annotations

from dataclasses import dataclass

from servekit.facts.model import ModelFacts
from servekit.fit.constants import value
from servekit.fit.dtypes import dtype_bytes
from servekit.fit.encoder import EncoderProfile, encoder_profile, tower
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.versions import counts_cudagraphs, rule

GIB = 1 << 30
DEFAULT_MAX_MODEL_LEN = 4096
NVSWITCH_INTERCONNECTS = ("nvlink", "nvl4", "nvswitch", "nvl72", "xgmi")
NO_DRAFT_NETWORK = ("ngram", "suffix")


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


def _large(device_gib: float, device_name: str = "") -> bool:
    return device_gib >= value("large_device_gib") and "a100" not in device_name.lower()


def default_max_num_seqs(device_gib: float, device_name: str = "") -> int:
    return 1024 if _large(device_gib, device_name) else 256


def default_max_num_batched_tokens(device_gib: float, device_name: str = "") -> int:
    if device_gib >= value("huge_device_gib"):
        return 16384
    return 8192 if _large(device_gib, device_name) else 2048


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


def profiled_tokens(facts: ModelFacts, launch: LaunchSettings, device: Device, engine_version: str | None) -> int:
    batched = launch.max_num_batched_tokens or default_max_num_batched_tokens(device.memory_gib, device.name)
    if rule("profile_tokens", engine_version) == "max_model_len":
        return max(batched, launch.max_model_len or facts.max_position_embeddings or batched)
    return batched


def forward_gib(facts: ModelFacts, launch: LaunchSettings, tokens: int) -> float:
    """Peak live activations of one decoder layer over ``tokens`` tokens on one rank."""
    hidden = facts.hidden_size or value("default_hidden")
    intermediate = facts.intermediate_size or hidden * value("intermediate_per_hidden")
    width = intermediate / launch.tp + hidden
    return tokens * value("forward_bytes_per_token_unit") * width * _activation_bytes(facts, launch) / GIB


def uses_drafter(launch: LaunchSettings) -> bool:
    """Whether speculative decoding runs a draft network (MTP, EAGLE, a draft model), not a
    lookup such as n-gram or suffix decoding."""
    method = str(launch.spec_method or "").lower()
    return bool(method) and not any(word in method for word in NO_DRAFT_NETWORK)


def drafter_gib(facts: ModelFacts, launch: LaunchSettings, tokens: int) -> float:
    """What the drafter's dummy pass keeps live besides its own layer's activations: the
    target's output hidden states and the drafter's hidden-states buffer, ``tokens`` rows each."""
    if not uses_drafter(launch):
        return 0.0
    hidden = facts.hidden_size or value("default_hidden")
    return tokens * hidden * value("drafter_hidden_rows") * _activation_bytes(facts, launch) / GIB


def _activation_bytes(facts: ModelFacts, launch: LaunchSettings) -> float:
    return dtype_bytes(launch.dtype if launch.dtype and launch.dtype != "auto" else facts.dtype)


def sampler_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, engine_version: str | None) -> float:
    """The dummy sampler pass: ``max_num_seqs`` rows of full-vocabulary logits; with speculative
    decoding the rejection sampler's pass that follows it, when larger."""
    seqs = launch.max_num_seqs or default_max_num_seqs(device.memory_gib, device.name)
    vocab = facts.vocab_size or value("default_vocab")
    per_logit = value(rule("sampler", engine_version))
    if launch.spec_tokens > 0 or launch.spec_method:
        per_logit = max(per_logit, value("rejection_sampler_bytes_per_logit"))
    return seqs * vocab * per_logit / GIB


def encoder_gib(facts: ModelFacts, launch: LaunchSettings, device: Device) -> EncoderProfile | None:
    """The multimodal encoder's profile terms (``servekit.fit.encoder``); None when the tower is
    not profiled (a text-only model, or no media allowed)."""
    vision = tower(facts)
    if vision is None or launch.language_model_only:
        return None
    return encoder_profile(
        vision,
        lm_hidden=facts.hidden_size or int(value("default_hidden")),
        act_bytes=_activation_bytes(facts, launch),
        tp=launch.tp,
        batched=launch.max_num_batched_tokens or default_max_num_batched_tokens(device.memory_gib, device.name),
        max_num_seqs=launch.max_num_seqs or default_max_num_seqs(device.memory_gib, device.name),
        max_model_len=launch.max_model_len or facts.max_position_embeddings or DEFAULT_MAX_MODEL_LEN,
    )


def activation_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, engine_version: str | None = None) -> float:
    """The profile run's transient peak: the encoder's dummy batch runs first; its outputs stay in
    the encoder cache while the forward pass and then the dummy sampler run, so the peak is the
    larger of the tower's own peak and what it keeps plus the larger of those two."""
    tokens = profiled_tokens(facts, launch, device, engine_version)
    forward = forward_gib(facts, launch, tokens) + drafter_gib(facts, launch, tokens)
    language = max(forward, sampler_gib(facts, launch, device, engine_version))
    encoder = encoder_gib(facts, launch, device)
    if encoder is None:
        return language
    return max(encoder.transient_gib, encoder.kept_gib + language)


def runtime_gib(launch: LaunchSettings, device: Device) -> float:
    """Non-torch memory: CUDA context and workspaces, plus communication buffers between ranks."""
    if launch.tp * launch.pp <= 1:
        return value("non_torch_gib")
    switched = (device.profile.interconnect or "") in NVSWITCH_INTERCONNECTS
    return value("non_torch_gib") + value("comm_nvswitch_gib" if switched else "comm_pcie_gib")


def capture_sizes(max_size: int) -> int:
    """How many batch sizes vLLM captures up to ``max_size``: 1, 2, 4, then steps of 8 to 256,
    then steps of 16 (vllm/config/compilation.py)."""
    small = [s for s in (1, 2, 4) if s <= max_size]
    return len(small) + len(range(8, min(max_size, 255) + 1, 8)) + len(range(256, max_size + 1, 16))


def cudagraph_gib(facts: ModelFacts, launch: LaunchSettings, device: Device) -> float:
    if launch.enforce_eager:
        return 0.0
    seqs = launch.max_num_seqs or default_max_num_seqs(device.memory_gib, device.name)
    largest = int(min(seqs * (1 + launch.spec_tokens) * 2, value("cudagraph_max_capture")))
    layers = -(-facts.num_layers // launch.pp)
    return value("cudagraph_gib_per_layer_graph") * layers * capture_sizes(largest)


def rank_memory(
    facts: ModelFacts,
    launch: LaunchSettings,
    device: Device,
    weights_gib: float | None = None,
    engine_version: str | None = None,
) -> RankMemory:
    weights = weights_gib if weights_gib is not None else weights_gib_per_rank(facts, launch)
    return RankMemory(
        weights=weights or 0.0,
        activation=activation_gib(facts, launch, device, engine_version),
        runtime=runtime_gib(launch, device),
        cudagraph=cudagraph_gib(facts, launch, device) if counts_cudagraphs(engine_version) else 0.0,
    )
