"""The time of one engine step on one pipeline stage, term by term.

A step carries ``tokens`` new tokens (decode tokens plus prefill chunks) for ``seqs`` sequences
whose KV cache of ``context`` tokens each is read. On one rank of TP x PP:

* weights: the bytes every token of the step multiplies through, read once: the dense part over
  TP x PP, plus the routed experts the step's tokens touch (``shape.touched_fraction``) over the
  ranks that hold them (with expert parallelism, the tokens of every replica sharing them; the
  all-to-all of expert parallelism is not modelled);
* KV: ``seqs x context x kv_bytes_per_token`` (per rank, from ``servekit.fit``) over PP;
* compute: 2 FLOPs per active parameter per token, plus attention 2 x layers x heads x
  (qk + v width) x context per token, over TP x PP, at the part's dense FLOPs in the
  checkpoint's format (``hardware.device_compute.compute_format``) times the achievable share
  (one share for dense work, another for routed experts);
* communication: two all-reduces per layer under TP (after attention and after the MLP, as
  Megatron-LM lays TP out, https://arxiv.org/abs/1909.08053), each moving 2 (TP - 1) / TP of the
  step's activations over the link (ring all-reduce), plus a fixed latency each (fitted);
* overhead: the engine's per-step cost, a per-layer cost and a per-sequence cost (fitted
  constants).

Weights and KV are read from the same memory, so the memory time is their sum; the step lasts
max(memory, compute) + communication + overhead (memory and compute overlap, the all-reduce and
the launch overheads do not). The binding term is the largest of weights, KV, compute,
communication and overhead.
"""

from __future__ import annotations

from dataclasses import dataclass

from servekit.perf.shape import ACTIVATION_BYTES, ModelShape, touched_fraction


@dataclass(frozen=True)
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
    allreduce_s: float = 0.0
    """Fixed seconds of one all-reduce."""


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    expert_replicas: int = 1
    """Data-parallel replicas that share one set of experts (expert parallelism across DP ranks:
    each rank holds 1 / (TP x replicas) of the experts, and the replicas' tokens all route to
    them); 1 without expert parallelism."""


@dataclass(frozen=True)
class StepTerms:
    weights: float
    kv: float
    compute: float
    communication: float
    overhead: float

    @property
    def total(self) -> float:
        return max(self.weights + self.kv, self.compute) + self.communication + self.overhead

    @property
    def binding(self) -> str:
        named = {"weight bandwidth": self.weights, "KV bandwidth": self.kv, "compute": self.compute,
                 "communication": self.communication, "engine overhead": self.overhead}
        return max(named, key=lambda k: named[k])

    def as_ms(self) -> dict[str, float]:
        return {"weights": self.weights * 1e3, "kv": self.kv * 1e3, "compute": self.compute * 1e3,
                "communication": self.communication * 1e3, "overhead": self.overhead * 1e3}


def flops_per_token(shape: ModelShape, context: float) -> float:
    """FLOPs of one token attending to ``context`` earlier tokens."""
    attention = 2.0 * shape.layers * shape.heads * shape.attention_dim * context
    return 2.0 * shape.params_active + attention


def expert_flops_per_token(shape: ModelShape) -> float:
    """The part of ``flops_per_token`` spent in routed experts (the k of E experts a token picks)."""
    if not shape.experts:
        return 0.0
    return 2.0 * shape.expert_params * min(1.0, shape.experts_per_token / shape.experts)


def compute_s(shape: ModelShape, layout: Layout, rates: Rates, tokens: float, context: float) -> float:
    """Seconds of arithmetic of a step on one rank: dense work at ``flops``, expert work at
    ``expert_flops``."""
    experts = expert_flops_per_token(shape)
    dense = max(0.0, flops_per_token(shape, context) - experts)
    per_rank = tokens / (layout.tp * layout.pp)
    return per_rank * (dense / rates.flops + experts / (rates.expert_flops or rates.flops))


def weight_bytes(shape: ModelShape, layout: Layout, tokens: float) -> float:
    """Weight bytes one rank reads in a step of ``tokens`` tokens."""
    ranks = layout.tp * layout.pp
    shared = layout.expert_replicas
    touched = touched_fraction(tokens * shared, shape.experts, shape.experts_per_token) if shape.experts else 1.0
    return shape.dense_bytes / ranks + shape.expert_bytes * touched / (ranks * shared)


def allreduce_s(shape: ModelShape, layout: Layout, rates: Rates, tokens: float) -> float:
    """Seconds of the step's TP all-reduces on one stage (0 without TP)."""
    if layout.tp <= 1:
        return 0.0
    moved = tokens * shape.hidden * ACTIVATION_BYTES * 2.0 * (layout.tp - 1) / layout.tp
    return 2.0 * (shape.layers / layout.pp) * (moved / rates.link + rates.allreduce_s)


def step_terms(shape: ModelShape, layout: Layout, rates: Rates, *, tokens: float, seqs: float,
               context: float) -> StepTerms:
    """The terms of one step of one stage."""
    stage_layers = shape.layers / layout.pp
    return StepTerms(
        weights=weight_bytes(shape, layout, tokens) / rates.memory,
        kv=seqs * context * shape.kv_bytes_per_token / layout.pp / rates.memory,
        compute=compute_s(shape, layout, rates, tokens, context),
        communication=allreduce_s(shape, layout, rates, tokens),
        overhead=rates.step_s + stage_layers * rates.layer_s + seqs * rates.seq_s,
    )
