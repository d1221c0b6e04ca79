"""What a rank spends before the KV cache, term by term as vLLM's start-up profile counts it.

``gpu_worker.determine_available_memory`` sizes the pool as ``requested memory - weights -
activation peak - non-torch memory [- CUDA-graph estimate]``:

* weights: the bytes loaded on the rank (checkpoint, less the vision tower when serving text
  only and the MTP head unless it drafts), split over TP x PP except the tensors every TP rank
  holds whole (``servekit.fit.sharding``), plus what the load adds (Marlin's scales for FP8 on
  GPUs without FP8: ``servekit.fit.marlin``; the padding of MXFP4 experts to the sizes the MoE
  kernels of the GPU take: ``servekit.fit.mxfp4_layout``);
* activation peak: the profile run's largest transient (``profile_run``): the multimodal
  encoder's dummy batch (``servekit.fit.encoder``), whose outputs stay in the encoder cache while
  a forward pass over the profiled tokens (``servekit.fit.scheduler``) runs (the larger of a
  dense MLP's and a fused-MoE layer's peak; with a drafter, its dummy pass runs while the
  target's output is still held) and then the dummy sampler pass over ``max_num_seqs`` rows of
  logits (with speculative decoding, the rejection sampler's pass);
* non-torch: CUDA context and workspaces, plus communication buffers when ranks talk;
* CUDA graphs: counted only by releases that take them out of the budget (never by V0).

Linear-attention (Gated DeltaNet) layers add no term of their own: during the profile run the
forward context carries no attention metadata, so ``_forward_core`` of
``vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py`` returns before the chunked
kernels run (it only warms them up on 64 tokens). Their projections (``in_proj_qkvz``,
``core_attn_out``, the gated norm) are narrower than the MLP's ``gate_up`` output, so the
per-layer peak stays the MLP's. The recurrent state is part of the KV pool, not of this budget.

Every number comes from ``servekit.fit.constants``; release-dependent rules, and whether the V0
engine ran, from ``servekit.fit.versions``.
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.constants import value
from servekit.fit.conversion import load_dtype
from servekit.fit.dtypes import dtype_bytes
from servekit.fit.encoder import EncoderProfile, encoder_profile, tower
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.marlin import marlin_scale_gib
from servekit.fit.mxfp4_layout import layout_padding_gib, mxfp4_layout
from servekit.fit.scheduler import DEFAULT_MAX_MODEL_LEN, effective_max_model_len, scheduler_limits
from servekit.fit.sharding import GIB, loaded_weight_bytes, weights_gib_per_rank
from servekit.fit.versions import VllmRun
from servekit.records import record

__all__ = ["DEFAULT_MAX_MODEL_LEN", "GIB", "RankMemory", "loaded_weight_bytes", "rank_memory", "weights_gib_per_rank"]

NVSWITCH_INTERCONNECTS = ("nvlink", "nvl4", "nvswitch", "nvl72", "xgmi")
NO_DRAFT_NETWORK = ("ngram", "suffix")


RunLike = VllmRun | str | None
"""A ``VllmRun``, or just a version text (None: the newest release)."""


def as_run(run: RunLike, device: Device) -> VllmRun:
    """The run a version text names, on the device's platform."""
    return run if isinstance(run, VllmRun) else VllmRun(run, platform=device.profile.platform)


@record
class RankMemory:
    """GiB per rank."""

    weights: float
    activation: float
    runtime: float
    cudagraph: float = 0.0
    buffers: float = 0.0
    """The model runner's and the drafter's persistent buffers, where the release counts them."""
    load_added: tuple[tuple[str, float], ...] = ()
    """What the load adds to the checkpoint's bytes, included in ``weights``: (what, GiB) pairs."""

    @property
    def total(self) -> float:
        return self.weights + self.activation + self.runtime + self.cudagraph + self.buffers


def dense_forward_units(facts: ModelFacts, launch: LaunchSettings) -> float:
    """Live elements per token at a dense layer's peak, in units of ``forward_bytes_per_token_unit``:
    the MLP's intermediate split over TP plus the hidden size."""
    hidden = facts.hidden_size or value("default_hidden")
    intermediate = facts.dense_mlp_width or hidden * value("intermediate_per_hidden")
    return intermediate / launch.tp + hidden


def _moe_widths(facts: ModelFacts, launch: LaunchSettings) -> tuple[int, float, float] | None:
    """(top_k, N, K) of a fused-MoE layer on one rank: N the experts' gate-up width (the up width
    alone for ungated experts), K the width they read (the hidden size, or a latent MoE's latent);
    None without MoE facts."""
    moe, hidden = facts.moe, facts.hidden_size
    if moe is None or not hidden or not moe.experts_per_token:
        return None
    inner = moe.moe_intermediate_size or facts.intermediate_size or hidden * value("intermediate_per_hidden")
    expert_tp = 1 if launch.expert_parallel else launch.tp
    return moe.experts_per_token, (facts.mlp_projections - 1) * inner / expert_tp, float(facts.expert_width or hidden)


def moe_cache_elements(facts: ModelFacts, launch: LaunchSettings, modular: bool = False) -> float:
    """Elements per token of a fused-MoE layer's intermediate caches (0 without MoE facts): before
    the modular kernel, ``cache13`` (``top_k x max(N, K)``) and ``cache2`` (``top_k x N / 2``) of
    ``fused_experts_impl``; with it (``modular``), the workspace of ``TritonExperts.workspace_shapes``
    (``top_k x (max(N / 2, K) + max(N, K))``)."""
    widths = _moe_widths(facts, launch)
    if widths is None:
        return 0.0
    top_k, n, k = widths
    if modular:
        return top_k * (max(n / 2, k) + max(n, k))
    return top_k * (max(n, k) + n / 2)


def moe_forward_elements(facts: ModelFacts, launch: LaunchSettings, modular: bool = False) -> float:
    """Live elements per token at a fused-MoE layer's peak (0 without MoE facts): its intermediate
    caches (``moe_cache_elements``) and the three hidden-size tensors a layer keeps (residual,
    normed input, output)."""
    if _moe_widths(facts, launch) is None:
        return 0.0
    return moe_cache_elements(facts, launch, modular) + value("layer_hidden_rows") * float(facts.hidden_size or 0)


def moe_cache_tokens(tokens: int, chunk: int | None) -> int:
    """Tokens the fused-MoE caches are sized for: the whole pass, or one chunk of it when the
    release processes the experts in chunks (``VllmRun.moe_chunk_tokens``)."""
    return tokens if chunk is None else min(tokens, chunk)


def moe_workspace_gib(facts: ModelFacts, launch: LaunchSettings, tokens: int, run: VllmRun) -> float:
    """The fused-MoE workspace still allocated when the dummy sampler runs (0 before the release
    that keeps it: ``VllmRun.moe_workspace_persists``), sized for one chunk of the pass."""
    if not run.moe_workspace_persists:
        return 0.0
    cached = moe_cache_tokens(tokens, run.moe_chunk_tokens)
    return cached * moe_cache_elements(facts, launch, modular=True) * _activation_bytes(facts, launch) / GIB


def forward_gib(
    facts: ModelFacts, launch: LaunchSettings, tokens: int, modular_moe: bool = False, moe_chunk: int | None = None,
) -> float:
    """Peak live activations of one decoder layer over ``tokens`` tokens on one rank: the larger
    of a dense layer's (when any layer is dense) and a fused-MoE layer's (``modular_moe``: the
    release runs fused MoE through the modular kernel's workspace; ``moe_chunk``: the tokens its
    caches are sized for when the release chunks the pass, ``VllmRun.moe_chunk_tokens``)."""
    dense = tokens * value("forward_bytes_per_token_unit") * dense_forward_units(facts, launch)
    moe = 0.0
    if _moe_widths(facts, launch) is not None:
        caches = moe_cache_tokens(tokens, moe_chunk) * moe_cache_elements(facts, launch, modular_moe)
        moe = caches + tokens * value("layer_hidden_rows") * float(facts.hidden_size or 0)
    all_moe = moe > 0 and facts.moe is not None and not facts.has_dense_mlp()
    elements = moe if all_moe else max(dense, moe)
    return elements * _activation_bytes(facts, launch) / GIB


def uses_drafter(launch: LaunchSettings) -> bool:
    """Whether speculative decoding runs a draft network (MTP, EAGLE, a draft model), not a
    lookup such as n-gram or suffix decoding."""
    method = str(launch.spec_method or "").lower()
    return bool(method) and not any(word in method for word in NO_DRAFT_NETWORK)


def drafter_gib(facts: ModelFacts, launch: LaunchSettings, tokens: int) -> float:
    """What the drafter's dummy pass keeps live besides its own layer's activations: the
    target's output hidden states, ``tokens`` rows (its persistent buffers: ``buffers_gib``)."""
    if not uses_drafter(launch):
        return 0.0
    hidden = facts.hidden_size or value("default_hidden")
    return tokens * hidden * value("drafter_hidden_rows") * _activation_bytes(facts, launch) / GIB


def _activation_bytes(facts: ModelFacts, launch: LaunchSettings) -> float:
    return dtype_bytes(load_dtype(facts, launch))


def sampler_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, run: RunLike = None) -> float:
    """The dummy sampler pass: ``max_num_seqs`` rows of full-vocabulary logits on the release's
    sampler path; with speculative decoding the rejection sampler's pass that follows it, when
    larger (V1 only)."""
    run = as_run(run, device)
    seqs = scheduler_limits(facts, launch, device, run).max_num_seqs
    vocab = facts.vocab_size or value("default_vocab")
    per_logit = value(run.sampler_constant(seqs))
    if not run.v0 and (launch.spec_tokens > 0 or launch.spec_method):
        per_logit = max(per_logit, value("rejection_sampler_bytes_per_logit"))
    return seqs * vocab * per_logit / GIB


def encoder_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, run: RunLike = None) -> EncoderProfile | None:
    """The multimodal encoder's profile terms (``servekit.fit.encoder``); None when the tower is
    not profiled (a text-only model, or no media allowed)."""
    vision = tower(facts)
    if vision is None or launch.language_model_only:
        return None
    limits = scheduler_limits(facts, launch, device, as_run(run, device))
    return encoder_profile(
        vision,
        lm_hidden=facts.hidden_size or int(value("default_hidden")),
        act_bytes=_activation_bytes(facts, launch),
        tp=launch.tp,
        batched=limits.max_num_batched_tokens,
        max_num_seqs=limits.max_num_seqs,
        max_model_len=effective_max_model_len(facts, launch),
        limits=dict(launch.mm_limits),
    )


def activation_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, run: RunLike = None) -> float:
    """The profile run's transient peak: the encoder's dummy batch runs first; its outputs stay in
    the encoder cache while the forward pass and then the dummy sampler run (beside the fused-MoE
    workspace where the release keeps it), so the peak is the larger of the tower's own peak and
    what it keeps plus the larger of those two."""
    run = as_run(run, device)
    tokens = scheduler_limits(facts, launch, device, run).profile_tokens
    forward = forward_gib(facts, launch, tokens, run.moe_workspace_persists, run.moe_chunk_tokens) + \
        drafter_gib(facts, launch, tokens)
    sampler = sampler_gib(facts, launch, device, run) + moe_workspace_gib(facts, launch, tokens, run)
    language = max(forward, sampler)
    encoder = encoder_gib(facts, launch, device, run)
    if encoder is None:
        return language
    return max(encoder.transient_gib, encoder.kept_gib + language)


def runtime_gib(launch: LaunchSettings, device: Device, run: RunLike = None) -> float:
    """Non-torch memory: CUDA context and workspaces as the release's snapshot order counts them,
    plus the collectives' buffers when tensor-parallel ranks talk (pipeline stages only pass
    activations point to point: no all-reduce buffers)."""
    run = as_run(run, device)
    base = value(run.non_torch_constant_for(launch.enforce_eager))
    if launch.tp <= 1:
        return base
    switched = (device.profile.interconnect or "") in NVSWITCH_INTERCONNECTS
    return base + value(run.tp_comm_constant(switched))


def buffers_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, run: RunLike = None) -> float:
    """The persistent input buffers the model runner (``inputs_embeds``) and a drafter
    (``hidden_states``, ``inputs_embeds``) allocate after the start-up snapshot, one hidden-size
    row per schedulable token each; counted from the release that measures all consumed memory
    (``VllmRun.counts_runner_buffers``), before it they fall outside the profile."""
    run = as_run(run, device)
    if not run.counts_runner_buffers:
        return 0.0
    tokens = scheduler_limits(facts, launch, device, run).max_num_batched_tokens
    rows = value("runner_buffer_rows") + (value("drafter_buffer_rows") if uses_drafter(launch) else 0.0)
    hidden = facts.hidden_size or value("default_hidden")
    return tokens * hidden * rows * _activation_bytes(facts, launch) / GIB


def capture_sizes(max_size: int) -> int:
    """How many batch sizes vLLM captures up to ``max_size``: 1, 2, 4, then steps of 8 to 256,
    then steps of 16 (vllm/config/compilation.py)."""
    small = [s for s in (1, 2, 4) if s <= max_size]
    return len(small) + len(range(8, min(max_size, 255) + 1, 8)) + len(range(256, max_size + 1, 16))


ARCHITECTURE_MAX_CAPTURE = {"GptOssForCausalLM": 1024}
"""Largest captured batch size architectures set for themselves (vllm/model_executor/models/config.py
GptOssForCausalLMConfig.verify_and_update_config: 'Increase the max capture size from 512 to 1024')."""


def cudagraph_gib(facts: ModelFacts, launch: LaunchSettings, device: Device, run: RunLike = None) -> float:
    """vLLM's CUDA-graph estimate: per decoder layer and captured size, for the sizes up to the
    largest capture (``max_num_seqs x (1 + draft tokens) x 2`` up to 512, or the architecture's own
    size, never above ``max_num_batched_tokens``: ``VllmConfig._set_cudagraph_sizes``)."""
    if launch.enforce_eager:
        return 0.0
    limits = scheduler_limits(facts, launch, device, as_run(run, device))
    largest = ARCHITECTURE_MAX_CAPTURE.get(facts.architecture or "") or min(
        limits.max_num_seqs * (1 + launch.spec_tokens) * 2, value("cudagraph_max_capture"))
    largest = int(min(largest, limits.max_num_batched_tokens))
    layers = -(-facts.num_layers // launch.pp)
    return value("cudagraph_gib_per_layer_graph") * layers * capture_sizes(largest)


def load_added_gib(facts: ModelFacts, launch: LaunchSettings, device: Device,
                   weights_gib: float) -> tuple[tuple[str, float], ...]:
    """What loading ``weights_gib`` of checkpoint on a rank adds to it, per cause (the nonzero ones):
    Marlin's group scales of block-scaled FP8 (``servekit.fit.marlin``) and the padding of MXFP4
    experts to the sizes of the backend's kernels (``servekit.fit.mxfp4_layout``)."""
    causes = [("Marlin's FP8 group scales", marlin_scale_gib(facts, launch, device, weights_gib))]
    layout = mxfp4_layout(facts, device)
    if layout is not None:
        causes.append((f"MXFP4 experts padded for {layout.backend}", layout_padding_gib(facts, launch, layout)))
    return tuple((what, gib) for what, gib in causes if gib > 0)


def rank_memory(
    facts: ModelFacts,
    launch: LaunchSettings,
    device: Device,
    weights_gib: float | None = None,
    run: RunLike = None,
    weights_as_loaded: bool = False,
) -> RankMemory:
    """One rank's memory besides the KV cache. ``weights_gib`` (else the facts' checkpoint bytes)
    is the checkpoint's share of the rank, to which what the load adds is counted, unless
    ``weights_as_loaded`` says it is the engine's own figure (``Model loading took``)."""
    run = as_run(run, device)
    weights = (weights_gib if weights_gib is not None else weights_gib_per_rank(facts, launch)) or 0.0
    added = () if weights_as_loaded else load_added_gib(facts, launch, device, weights)
    return RankMemory(
        weights=weights + sum(gib for _, gib in added),
        load_added=added,
        activation=activation_gib(facts, launch, device, run),
        runtime=runtime_gib(launch, device, run),
        cudagraph=cudagraph_gib(facts, launch, device, run) if run.counts_cudagraphs else 0.0,
        buffers=buffers_gib(facts, launch, device, run),
    )
