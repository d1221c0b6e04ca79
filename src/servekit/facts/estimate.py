"""Weight bytes estimated from a config.json alone, when no safetensors header is at hand.

Parameters are counted per block from the shapes the config states (embeddings, attention or
MLA projections, dense or expert MLPs, norms left out) and priced at the checkpoint's weight
precision: the quantization format's bytes per weight for the linear layers, scales included
(``servekit.facts.quant_bytes``), the dtype for embeddings. The
figure is marked ``exact=False`` and ``basis="estimated from config.json"``; exact bytes come
from the safetensors headers (``servekit facts fetch``).
"""

from __future__ import annotations

from typing import Any

from servekit.facts.config import language_config
from servekit.facts.model import ModelFacts, WeightBytes
from servekit.facts.quant_bytes import QuantFormat, bytes_per_weight, format_from_config
from servekit.facts.vision import vision_from_config, vision_params

ESTIMATED = "estimated from config.json"
DTYPE_BYTES = {"float32": 4.0, "float": 4.0, "float16": 2.0, "half": 2.0, "bfloat16": 2.0,
               "float8_e4m3fn": 1.0, "float8": 1.0}


def linear_weight_bytes(config: dict[str, Any], dtype_bytes: float, quant: QuantFormat | None = None) -> float:
    """Bytes per weight of the linear layers: ``quant`` when given, else the config's
    ``quantization_config`` (``servekit.facts.quant_bytes``: data and scales per method), else
    the dtype's."""
    if quant is None:
        q = config.get("quantization_config") or language_config(config).get("quantization_config")
        quant = format_from_config(q) if isinstance(q, dict) else None
    return bytes_per_weight(quant) if quant is not None else dtype_bytes


def _int(cfg: dict[str, Any], *keys: str, default: int = 0) -> int:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return default


def _attention_params(cfg: dict[str, Any], facts: ModelFacts, hidden: int) -> int:
    heads, kv, head_dim = facts.num_attention_heads, facts.num_kv_heads, facts.head_dim
    if facts.mla is not None:
        rope, rank = facts.mla.qk_rope_head_dim, facts.mla.kv_lora_rank
        nope, v_dim = _int(cfg, "qk_nope_head_dim", default=128), _int(cfg, "v_head_dim", default=128)
        q_rank = _int(cfg, "q_lora_rank")
        q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
        return q + hidden * (rank + rope) + rank * heads * (nope + v_dim) + heads * v_dim * hidden
    gate = 2 if cfg.get("attn_output_gate") else 1  # Qwen3-Next / Qwen3.5: q_proj also emits the output gate
    return hidden * heads * head_dim * (1 + gate) + hidden * kv * head_dim * 2


def _mlp_params(facts: ModelFacts, hidden: int, layer: int) -> int:
    moe = facts.moe
    dense = 3 * hidden * (facts.intermediate_size or 4 * hidden)
    if moe is None or layer < moe.dense_layers:
        return dense
    inner = moe.moe_intermediate_size or facts.intermediate_size or 4 * hidden
    return (moe.num_experts + moe.shared_experts) * 3 * hidden * inner + hidden * moe.num_experts


def estimated_weight_bytes(config: dict[str, Any], facts: ModelFacts, quant: QuantFormat | None = None) -> WeightBytes:
    """The checkpoint's weight bytes as the config's shapes imply (``exact=False``), its linears
    priced by ``quant`` when given (a format stated beside the config), else by the config's own
    ``quantization_config``."""
    cfg = language_config(config)
    hidden = facts.hidden_size or facts.num_attention_heads * facts.head_dim
    dtype_bytes = DTYPE_BYTES.get(str(facts.dtype).lower().replace("torch.", ""), 2.0)
    per_weight = linear_weight_bytes(config, dtype_bytes, quant)
    attention = _attention_params(cfg, facts, hidden)
    linear_mixer = 4 * hidden * hidden
    layers = 0.0
    for index, kind in enumerate(facts.layers):
        mixer = linear_mixer if kind == "linear" else (0 if kind == "none" else attention)
        layers += (mixer + _mlp_params(facts, hidden, index)) * per_weight
    # an MTP head: one decoder layer and the projection of [embedding; hidden state] (2h -> h)
    # (vllm/model_executor/models/qwen3_next_mtp.py fc, deepseek_mtp.py eh_proj)
    mtp_layer = attention + _mlp_params(facts, hidden, facts.num_layers) + 2 * hidden * hidden
    mtp = facts.mtp_layers * mtp_layer * per_weight
    vocab = facts.vocab_size or 0
    tied = bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))
    embeddings = vocab * hidden * (1 if tied else 2) * dtype_bytes
    tower = facts.vision or vision_from_config(config)
    vision = (vision_params(tower, hidden) if tower is not None else 0) * dtype_bytes
    total = int(layers + mtp + embeddings + vision)
    return WeightBytes(total=total, vision=int(vision), mtp=int(mtp), exact=False, basis=ESTIMATED)
