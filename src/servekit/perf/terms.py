"""The time of one engine step on one pipeline stage, term by term.

A step carries ``tokens`` new tokens (decode tokens plus prefill chunks) for ``seqs`` sequences
whose KV cache of ``context`` tokens each is read. On one rank of TP x PP:

* weights: the bytes every token of the step multiplies through, read once: the dense part over
  TP x PP (an untied input embedding is looked up row by row, not streamed), plus the routed
  experts the step's tokens touch (``shape.touched_fraction``) over the ranks that hold them (with expert parallelism, the tokens of every replica sharing them; the
  all-to-all of expert parallelism is not modelled); the experts' bytes stream at their own rate
  (``Rates.expert_memory``: grouped products of a few tokens per expert stream slower than dense
  ones);
* KV: ``seqs x context x kv_bytes_per_token`` (per rank, from ``servekit.fit``) over PP;
* activations: what each token's hidden states move per layer outside the weight and KV reads
  (``activation_bytes``; on GPUs);
* compute: 2 FLOPs per active parameter per token at the part's dense FLOPs in the checkpoint's
  format (``hardware.device_compute.compute_format``), plus attention 2 x layers x heads x
  (qk + v width) x context per token at the rate of the KV cache's format (FP8 with an FP8 cache,
  else 16-bit: no engine here runs attention in a 4-bit format), over TP x PP, times the
  achievable share (one share for dense work, another for routed experts). A decode token attends the whole
  ``context`` at the decode width (MLA's absorbed form: ``ModelShape.decode_attention_dim``); a
  prompt's token attends, under the causal mask, the tokens before it: half the prompt on
  average over its chunks (``prefill_context``) at the prefill width;
* communication: two all-reduces per layer under TP (after attention and after the MLP, as
  Megatron-LM lays TP out, https://arxiv.org/abs/1909.08053), each moving 2 (TP - 1) / TP of the
  step's activations over the link (ring all-reduce), plus a fixed latency each (fitted);
* overhead: the engine's per-step cost, a per-layer cost and a per-sequence cost (fitted
  constants); on CPUs also a per-token cost of each layer (``Rates.token_s``); on GPUs a cost per
  running sequence per layer (``Rates.seq_layer_s``, fitted: the paged attention's work per
  sequence, its token's KV-cache write and rotary), which for MLA models is instead a cost per
  decoding sequence per layer on each rank that holds the sequence's latent cache
  (``Rates.mla_seq_s``, fitted: under TP every rank holds every sequence's latent and runs the
  absorbed decode over all of them for its few heads; with data-parallel attention inside the TP
  group, ``Layout.attention_dp``, a rank holds 1 / attention_dp of the sequences, and reads only
  their latents).

Weights, KV and activations cross the same memory, so the memory time is their sum; the step lasts
max(memory, compute) + communication + overhead (memory and compute overlap, the all-reduce and
the launch overheads do not). Where the engine schedules a step ahead of the device
(``Rates.overlap``: vLLM's async scheduling), the host's part of the overhead (the per-step and
per-sequence costs) runs beside the device's work of the step before, and the step lasts the longer
of the two. The binding term is the largest of weights, KV, activations, compute, communication and
overhead.
"""

from __future__ import annotations

from servekit.perf.shape import ACTIVATION_BYTES, LM_HEAD_BYTES, ModelShape, touched_fraction
from servekit.records import record


@record
class Rates:
    """What one device achieves: bytes/s of memory, FLOP/s, bytes/s of link, seconds of overhead."""

    memory: float
    flops: float
    """FLOP/s of dense work (attention, dense MLPs, projections)."""
    link: float
    layer_s: float
    step_s: float
    seq_s: float = 0.0
    expert_flops: float = 0.0
    """FLOP/s of routed-expert work (0: as ``flops``)."""
    attention_flops: float = 0.0
    """FLOP/s of attention's products (scores and values), which run in the KV cache's format, not
    the weights' (0: as ``flops``; ``servekit.perf.launch.attention_format``)."""
    allreduce_s: float = 0.0
    """Fixed seconds of one all-reduce."""
    request_s: float = 0.0
    """Fixed seconds each request spends outside the engine's steps before its first token
    reaches the client (HTTP handling, tokenizing, the hand-over to the engine process and back)."""
    expert_memory: float = 0.0
    """Bytes/s at which routed experts' weights stream (0: as ``memory``)."""
    activations: bool = False
    """Whether the step's activation traffic (``activation_bytes``) is counted: on GPUs; the CPU
    backend's per-token cost (``token_s``) stands for it."""
    token_s: float = 0.0
    """Seconds each token of a step spends per decoder layer outside the projections' products
    (norms, rotary embedding, the gated activation, the residual adds: work a CPU runs one
    operation after another, beside the products rather than overlapped with them); 0 on GPUs,
    where the activation traffic stands for it."""
    mla_seq_s: float = 0.0
    """Seconds each decoding sequence costs per MLA layer on a rank that holds its latent cache."""
    seq_layer_s: float = 0.0
    """Seconds each running sequence costs per layer on a rank (GPUs, models without MLA)."""
    overlap: bool = False
    """Whether the engine's host work of a step (``step_s`` and ``seq_s``: scheduling, input
    preparation, output handling) runs while the device runs the step before, as vLLM's async
    scheduling does (``servekit.perf.launch.overlaps_host_work``)."""


@record
class Layout:
    tp: int = 1
    pp: int = 1
    expert_replicas: int = 1
    """Data-parallel replicas that share one set of experts (expert parallelism across DP ranks:
    each rank holds 1 / (TP x replicas) of the experts, and the replicas' tokens all route to
    them); 1 without expert parallelism."""
    attention_dp: int = 1
    """Data-parallel attention ranks inside the TP group (SGLang's ``--enable-dp-attention``):
    each holds the KV cache of 1 / attention_dp of the sequences."""


@record
class StepTerms:
    weights: float
    kv: float
    compute: float
    communication: float
    overhead: float
    activations: float = 0.0
    host: float = 0.0
    """The host's part of ``overhead`` (per step and per sequence); the rest is the device's (per
    layer)."""
    overlap: bool = False
    """Whether ``host`` runs beside the device's work (``Rates.overlap``)."""

    @property
    def total(self) -> float:
        device = max(self.weights + self.kv + self.activations, self.compute) + self.communication + \
            self.overhead - self.host
        return max(device, self.host) if self.overlap else device + self.host

    @property
    def binding(self) -> str:
        named = {"weight bandwidth": self.weights, "KV bandwidth": self.kv, "compute": self.compute,
                 "communication": self.communication, "engine overhead": self.overhead,
                 "activation traffic": self.activations}
        return max(named, key=lambda k: named[k])

    def as_ms(self) -> dict[str, float]:
        return {"weights": self.weights * 1e3, "kv": self.kv * 1e3, "activations": self.activations * 1e3,
                "compute": self.compute * 1e3, "communication": self.communication * 1e3,
                "overhead": self.overhead * 1e3}


def blended(a: StepTerms, wa: float, b: StepTerms, wb: float) -> StepTerms:
    """The terms of a run of steps, ``wa`` of them of kind ``a`` and ``wb`` of kind ``b``, term by term."""
    def mix(name: str) -> float:
        return wa * getattr(a, name) + wb * getattr(b, name)

    return StepTerms(weights=mix("weights"), kv=mix("kv"), compute=mix("compute"), communication=mix("communication"),
                     overhead=mix("overhead"), activations=mix("activations"), host=mix("host"), overlap=a.overlap)


def attention_flops(shape: ModelShape, context: float, width: int) -> float:
    """FLOPs of one token's attention to ``context`` earlier tokens, ``width`` per head
    (scores and values: 2 FLOPs per multiply-add)."""
    return 2.0 * shape.layers * shape.heads * width * context


def expert_flops_per_token(shape: ModelShape) -> float:
    """The part of a token's FLOPs spent in routed experts (the k of E experts a token picks)."""
    if not shape.experts:
        return 0.0
    return 2.0 * shape.expert_params * min(1.0, shape.experts_per_token / shape.experts)


def compute_s(shape: ModelShape, layout: Layout, rates: Rates, tokens: float, context: float,
              prefill_tokens: float = 0.0, prefill_context: float = 0.0) -> float:
    """Seconds of arithmetic of a step on one rank: dense work at ``flops``, expert work at
    ``expert_flops``; ``prefill_tokens`` of the ``tokens`` are prompt tokens attending
    ``prefill_context`` earlier tokens each, the rest decode tokens attending ``context``."""
    experts = expert_flops_per_token(shape)
    prefill = min(tokens, prefill_tokens)
    attention = ((tokens - prefill) * attention_flops(shape, context, shape.decode_width)
                 + prefill * attention_flops(shape, prefill_context, shape.attention_dim))
    dense = tokens * max(0.0, 2.0 * shape.params_active - experts)
    ranks = layout.tp * layout.pp
    return (dense / rates.flops + attention / (rates.attention_flops or rates.flops)
            + tokens * experts / (rates.expert_flops or rates.flops)) / ranks


def expert_touched(shape: ModelShape, layout: Layout, tokens: float) -> float:
    """Share of the routed experts a step of ``tokens`` tokens touches (with expert parallelism,
    the tokens of every replica sharing them); 1 for a dense model."""
    if not shape.experts:
        return 1.0
    return touched_fraction(tokens * layout.expert_replicas, shape.experts, shape.experts_per_token)


def weight_bytes_split(shape: ModelShape, layout: Layout, tokens: float) -> tuple[float, float]:
    """(dense, routed-expert) weight bytes one rank reads in a step of ``tokens`` tokens."""
    ranks = layout.tp * layout.pp
    share = expert_touched(shape, layout, tokens)
    return shape.streamed_dense_bytes / ranks, shape.expert_bytes * share / (ranks * layout.expert_replicas)


def weight_s(shape: ModelShape, layout: Layout, rates: Rates, tokens: float) -> float:
    """Seconds one rank reads its weights in a step: dense bytes at ``memory``, the routed experts
    the step touches at ``expert_memory``."""
    dense, experts = weight_bytes_split(shape, layout, tokens)
    return dense / rates.memory + experts / (rates.expert_memory or rates.memory)


def lm_head_s(shape: ModelShape, layout: Layout, rates: Rates) -> float:
    """Seconds to read the output head (``vocab x hidden`` weights, split over TP) once. The head
    is taken as BF16 whatever the checkpoint's format (quantized checkpoints keep it unquantized:
    DeepSeek-V3's FP8 release and NVIDIA ModelOpt exports list it among the modules not converted),
    an assumption; it already sits in the weight bytes of a full step."""
    return shape.vocab * shape.hidden * LM_HEAD_BYTES / layout.tp / rates.memory


def allreduce_s(shape: ModelShape, layout: Layout, rates: Rates, tokens: float) -> float:
    """Seconds of the step's TP all-reduces on one stage (0 without TP)."""
    if layout.tp <= 1:
        return 0.0
    moved = tokens * shape.hidden * ACTIVATION_BYTES * 2.0 * (layout.tp - 1) / layout.tp
    return 2.0 * (shape.layers / layout.pp) * (moved / rates.link + rates.allreduce_s)


ACTIVATION_PASSES_REPLICATED = 9.0
ACTIVATION_PASSES_SPLIT = 32.0
"""Hidden-sized vectors each token reads or writes per layer outside the weight and KV reads, with
no reuse in cache (an upper bound), counted on a Llama layer (query width h, KV 0.25 h,
intermediate 3.5 h): the two norms with the residual adds (read 2 h, write h each; 9 h in all,
every TP rank) and, split over TP, the projections' inputs and outputs (QKV 2.5 h, O 2 h, gate
and up 8 h, down 4.5 h), the rotary embedding (2.5 h), attention's query in and output out (2 h)
and the gated activation (read 7 h, write 3.5 h): 32 h. An assumption: MoE and MLA layers are
taken at the same count."""


def activation_bytes(shape: ModelShape, layout: Layout, tokens: float) -> float:
    """Activation bytes one rank moves in a step of ``tokens`` tokens (``ACTIVATION_PASSES_*``)."""
    passes = ACTIVATION_PASSES_REPLICATED + ACTIVATION_PASSES_SPLIT / layout.tp
    return tokens * (shape.layers / layout.pp) * shape.hidden * ACTIVATION_BYTES * passes


def step_terms(shape: ModelShape, layout: Layout, rates: Rates, *, tokens: float, seqs: float,
               context: float, prefill_tokens: float = 0.0, prefill_context: float = 0.0) -> StepTerms:
    """The terms of one step of one stage: ``seqs`` sequences read ``context`` tokens of KV each;
    ``prefill_tokens`` of the ``tokens`` are prompt tokens attending ``prefill_context`` each."""
    stage_layers = shape.layers / layout.pp
    held = seqs
    if shape.latent_attention:  # a rank holds the latents of its data-parallel attention share
        held = seqs / layout.attention_dp
        per_seq = held * stage_layers * rates.mla_seq_s
    else:
        per_seq = seqs * stage_layers * rates.seq_layer_s
    return StepTerms(
        weights=weight_s(shape, layout, rates, tokens),
        kv=held * context * shape.kv_bytes_per_token / layout.pp / rates.memory,
        compute=compute_s(shape, layout, rates, tokens, context, prefill_tokens, prefill_context),
        communication=allreduce_s(shape, layout, rates, tokens),
        overhead=rates.step_s + stage_layers * (rates.layer_s + tokens * rates.token_s) + seqs * rates.seq_s + per_seq,
        activations=activation_bytes(shape, layout, tokens) / rates.memory if rates.activations else 0.0,
        host=rates.step_s + seqs * rates.seq_s, overlap=rates.overlap,
    )
