"""Weights per rank: what vLLM loads, split over tensor and pipeline ranks, less what every tensor
rank holds whole.

Tensor parallelism splits the column- and row-parallel linears, the embeddings and the experts;
some tensors are ``ReplicatedLinear`` (``disable_tp``) and every TP rank keeps all of them:

* MLA's down projections (``vllm/model_executor/models/deepseek_v2.py``: ``fused_qkv_a_proj`` =
  q_a_proj + kv_a_proj_with_mqa when ``q_lora_rank`` is set, else ``kv_a_proj_with_mqa``):
  ``hidden x (q_lora_rank + kv_lora_rank + qk_rope_head_dim)`` per MLA layer, at the checkpoint's
  linear width (an FP8 checkpoint quantizes them);
* the MoE router (``GateLinear``, a ``ReplicatedLinear`` built without the checkpoint's quant
  config): ``hidden x num_experts`` per MoE layer at the model dtype.

Norms are replicated too and negligible. Pipeline stages split the decoder layers as vLLM's
``get_pp_indices`` does (``vllm/distributed/utils.py``: an even split, the remainder going to the
stages before the last); the first stage also holds the input embedding and the last the LM head
(with tied embeddings, a copy of the embedding). Every stage sizes its own KV cache and the pool
takes the smallest (``get_kv_cache_configs``), so a rank's share is that of the heaviest stage.

The multimodal encoder is split over TP ranks like the rest, unless ``--mm-encoder-tp-mode data``
asks every TP rank to hold the whole encoder and split its batch instead
(``vllm/config/multimodal.py``: "hosting the full weights on each TP rank").

With expert parallelism over data-parallel ranks (``--enable-expert-parallel`` and
``--data-parallel-size`` > 1) the experts are split over TP x DP ranks while the rest is split over
TP only; the experts' share of the checkpoint comes from the config's shapes.
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.conversion import converted_bytes, expert_params, vocab_matrix_bytes
from servekit.fit.dtypes import dtype_bytes
from servekit.fit.launch import LaunchSettings

GIB = 1 << 30
ONE_BYTE_METHODS = ("fp8",)
"""Quantization methods (or ModelOpt algorithms) whose linear weights are one byte, scales aside;
other methods leave these projections at the model dtype, the safer plan."""


def loaded_weight_bytes(facts: ModelFacts, launch: LaunchSettings) -> int | None:
    """Bytes the engine loads: the checkpoint, less the vision tower when serving text only and
    less the MTP head unless it drafts, as ``--dtype`` and online quantization leave them
    (``servekit.fit.conversion``)."""
    if facts.weights is None:
        return None
    loaded = facts.weights.total
    vision = facts.weights.vision
    if launch.language_model_only:
        loaded -= vision
        vision = 0
    if not launch.uses_mtp:
        loaded -= facts.weights.mtp
    return int(converted_bytes(facts, launch, loaded, vision))


def _linear_bytes(facts: ModelFacts) -> float:
    method = (facts.quantization.method if facts.quantization else "").lower()
    algo = str(facts.quantization.algo if facts.quantization else "").lower()
    if any(word in method or word in algo for word in ONE_BYTE_METHODS):
        return 1.0
    return dtype_bytes(facts.dtype)


def _moe_layers(facts: ModelFacts) -> int:
    return facts.expert_layers()


def replicated_bytes(facts: ModelFacts) -> float:
    """Bytes every tensor-parallel rank holds whole (MLA down projections and MoE routers); 0 when
    the facts do not state the hidden size."""
    hidden = facts.hidden_size
    if not hidden:
        return 0.0
    total = 0.0
    if facts.mla is not None:
        width = (facts.mla.q_lora_rank or 0) + facts.mla.kv_lora_rank + facts.mla.qk_rope_head_dim
        total += facts.layers.count("mla") * hidden * width * _linear_bytes(facts)
    if facts.moe is not None:
        total += _moe_layers(facts) * hidden * facts.moe.num_experts * dtype_bytes(facts.dtype)
    return total


def expert_bytes(facts: ModelFacts) -> float:
    """The routed experts' bytes as the config's shapes imply (gate, up and down projections)."""
    return expert_params(facts) * _linear_bytes(facts)


def whole_encoder_bytes(facts: ModelFacts, launch: LaunchSettings) -> float:
    """The multimodal encoder's bytes when every TP rank holds all of it (0 otherwise)."""
    if facts.weights is None or launch.language_model_only or not launch.mm_encoder_data_parallel:
        return 0.0
    return float(facts.weights.vision)


def pp_stage_layers(num_layers: int, pp: int) -> list[int]:
    """Decoder layers of each pipeline stage (``get_pp_indices``, no ``VLLM_PP_LAYER_PARTITION``)."""
    stages = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        stages[-i] += 1
    return stages


def _heaviest_stage(rank: float, facts: ModelFacts, tp: int, pp: int) -> float:
    """One rank's bytes on the heaviest of ``pp`` stages, of ``rank`` bytes it would hold without
    pipeline parallelism."""
    ends = min(vocab_matrix_bytes(facts) / tp, rank / 2)
    body = rank - ends * (1 if facts.tied_embeddings else 2)
    layers = pp_stage_layers(facts.num_layers, pp) if facts.num_layers >= pp else [1] * pp
    total = sum(layers)
    shares = [body * n / total for n in layers]
    shares[0] += ends
    shares[-1] += ends
    return max(shares)


def per_rank_bytes(loaded: float, facts: ModelFacts, launch: LaunchSettings) -> float:
    """Bytes one rank holds of ``loaded`` checkpoint bytes (on the heaviest pipeline stage)."""
    tp, pp = launch.tp, launch.pp
    replicated = min(replicated_bytes(facts) + whole_encoder_bytes(facts, launch), loaded) if tp > 1 else 0.0
    experts = 0.0
    if launch.expert_parallel and launch.dp > 1:
        experts = min(expert_bytes(facts), loaded - replicated)
    sharded = loaded - replicated - experts
    rank = sharded / tp + replicated + experts / (tp * launch.dp)
    return rank if pp <= 1 else _heaviest_stage(rank, facts, tp, pp)


def weights_gib_per_rank(facts: ModelFacts, launch: LaunchSettings) -> float | None:
    loaded = loaded_weight_bytes(facts, launch)
    if loaded is None:
        return None
    return per_rank_bytes(loaded, facts, launch) / GIB
