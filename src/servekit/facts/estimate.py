"""Weight bytes estimated from a config.json alone, when no safetensors header is at hand.

Parameters are counted per block from the shapes the config states (embeddings, attention or
MLA projections, dense or expert MLPs, norms left out) and priced at the checkpoint's weight
precision: the quantization format's bytes per weight for the linear layers, scales included
(``servekit.facts.quant_bytes``), the dtype for embeddings. The
figure is marked ``exact=False`` and ``basis="estimated from config.json"``; exact bytes come
from the safetensors headers (``servekit facts fetch``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from servekit.facts.config import language_config
from servekit.facts.model import ModelFacts, WeightBytes
from servekit.facts.quant_bytes import QuantFormat, bytes_per_weight, format_from_config
from servekit.facts.unquantized import is_unquantized
from servekit.facts.vision import vision_from_config, vision_params

ESTIMATED = "estimated from config.json"
MTP_WITH_HEAD = ("DeepseekV2", "DeepseekV3", "Glm4Moe")
"""Architectures whose MTP layers keep their own embedding and output head in the checkpoint, at
the model dtype (vLLM's ``deepseek_mtp.py`` and ``glm4_moe_mtp.py``: the predictor's
``embed_tokens`` and each layer's ``SharedHead.head``); Qwen3-Next's and Nemotron-H's MTP layers
reuse the model's (``nemotron_h_mtp.py``: ``has_own_embed_tokens = False``)."""
DTYPE_BYTES = {"float32": 4.0, "float": 4.0, "float16": 2.0, "half": 2.0, "bfloat16": 2.0,
               "float8_e4m3fn": 1.0, "float8": 1.0}


def linear_format(config: dict[str, Any], quant: QuantFormat | None = None) -> QuantFormat | None:
    """How the linear layers are stored: ``quant`` when given, else the config's
    ``quantization_config`` (``servekit.facts.quant_bytes``), else None (the dtype)."""
    if quant is None:
        q = config.get("quantization_config") or language_config(config).get("quantization_config")
        quant = format_from_config(q) if isinstance(q, dict) else None
    return quant


def linear_weight_bytes(config: dict[str, Any], dtype_bytes: float, quant: QuantFormat | None = None) -> float:
    """Bytes per weight of the quantized linear layers (``linear_format``: data and scales per
    method), else the dtype's."""
    fmt = linear_format(config, quant)
    return bytes_per_weight(fmt) if fmt is not None else dtype_bytes


def _pricer(fmt: QuantFormat | None, dtype_bytes: float) -> Callable[[str, int | None], float]:
    """Bytes per weight of one part of one layer: the dtype's for the parts the format leaves
    unquantized (``servekit.facts.unquantized``), else the format's."""
    quantized = bytes_per_weight(fmt) if fmt is not None else dtype_bytes

    def price(part: str, layer: int | None) -> float:
        if fmt is not None and is_unquantized(fmt.unquantized, part, layer):
            return dtype_bytes
        return quantized

    return price


def _int(cfg: dict[str, Any], *keys: str, default: int = 0) -> int:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return default


def _attention_params(cfg: dict[str, Any], facts: ModelFacts, hidden: int, kind: str = "sliding") -> int:
    heads, kv, head_dim = facts.num_attention_heads, facts.num_kv_heads, facts.head_dim
    if kind == "full":
        kv, head_dim = facts.full_kv_heads or kv, facts.full_head_dim or head_dim
    if facts.mla is not None:
        rope, rank = facts.mla.qk_rope_head_dim, facts.mla.kv_lora_rank
        nope, v_dim = _int(cfg, "qk_nope_head_dim", default=128), _int(cfg, "v_head_dim", default=128)
        q_rank = _int(cfg, "q_lora_rank")
        q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
        return q + hidden * (rank + rope) + rank * heads * (nope + v_dim) + heads * v_dim * hidden
    gate = 2 if cfg.get("attn_output_gate") else 1  # Qwen3-Next / Qwen3.5: q_proj also emits the output gate
    value = facts.value_head_dim or head_dim  # v_proj's outputs and o_proj's inputs
    return hidden * heads * (head_dim * gate + value) + hidden * kv * (head_dim + value)


def _mixer_width(facts: ModelFacts, hidden: int) -> int:
    """``hidden x width`` weights in a constant-state mixer's projections
    (``LinearAttentionFacts.projection_width``); where the family's sizes do not give it (Mamba-1,
    lightning attention, Ling/Ring 3's KDA layers, facts stored without it), an assumption: four
    ``hidden x hidden`` projections, a short convolution's in and out projections."""
    width = facts.linear.projection_width if facts.linear is not None else 0
    return width or 4 * hidden


def _mlp_parts(facts: ModelFacts, hidden: int, layer: int) -> dict[str, int]:
    """Parameters of one layer's MLP by part: a dense MLP, or routed experts, shared experts and
    the router."""
    moe, matrices = facts.moe, facts.mlp_projections
    if moe is None or not facts.holds_experts(layer):
        return {"mlp": matrices * hidden * (facts.dense_mlp_width or 4 * hidden)}
    inner = moe.moe_intermediate_size or facts.intermediate_size or 4 * hidden
    pools = moe.num_experts * inner + sum(n * width for n, width in moe.modal_experts)
    latent = 2 * hidden * moe.latent_size if moe.latent_size else 0  # the projections into the latent and back
    return {"experts": pools * matrices * (facts.expert_width or hidden) + latent,
            "shared_experts": moe.shared_experts * matrices * hidden * inner, "router": hidden * moe.num_experts}


def _mlp_params(facts: ModelFacts, hidden: int, layer: int) -> int:
    return sum(_mlp_parts(facts, hidden, layer).values())


def _mlp_bytes(facts: ModelFacts, hidden: int, layer: int, price: Callable[[str, int | None], float],
               part_layer: int | None) -> float:
    return sum(n * price(part, part_layer) for part, n in _mlp_parts(facts, hidden, layer).items())


def estimated_weight_bytes(config: dict[str, Any], facts: ModelFacts, quant: QuantFormat | None = None) -> WeightBytes:
    """The checkpoint's weight bytes as the config's shapes imply (``exact=False``), its linears
    priced by ``quant`` when given (a format stated beside the config), else by the config's own
    ``quantization_config``."""
    cfg = language_config(config)
    hidden = facts.hidden_size or facts.num_attention_heads * facts.head_dim
    dtype_bytes = DTYPE_BYTES.get(str(facts.dtype).lower().replace("torch.", ""), 2.0)
    fmt = linear_format(config, quant)
    price = _pricer(fmt, dtype_bytes)
    attention = _attention_params(cfg, facts, hidden)
    linear_mixer = hidden * _mixer_width(facts, hidden)
    layers = 0.0
    for index, kind in enumerate(facts.layers):
        mixer = linear_mixer if kind == "linear" else (0 if kind == "none" else _attention_params(cfg, facts, hidden, kind))
        mixer_part = "linear_attention" if kind == "linear" else "attention"
        mlp = _mlp_bytes(facts, hidden, index, price, index) if facts.holds_mlp(index) else 0.0
        layers += mixer * price(mixer_part, index) + mlp
    # an MTP head: one decoder layer and the projection of [embedding; hidden state] (2h -> h)
    # (vllm/model_executor/models/qwen3_next_mtp.py fc, deepseek_mtp.py eh_proj), at the model
    # dtype when the config leaves the head unquantized
    mtp_layer = attention + _mlp_params(facts, hidden, facts.num_layers) + 2 * hidden * hidden
    if fmt is not None and is_unquantized(fmt.unquantized, "mtp", None):
        mtp_bytes = mtp_layer * dtype_bytes
    else:
        mtp_bytes = (attention + 2 * hidden * hidden) * price("attention", None) + \
            _mlp_bytes(facts, hidden, facts.num_layers, price, None)
    vocab = facts.vocab_size or 0
    if any(str(a).startswith(MTP_WITH_HEAD) for a in config.get("architectures") or cfg.get("architectures") or []):
        mtp_bytes += 2 * vocab * hidden * dtype_bytes
    mtp = facts.mtp_layers * mtp_bytes
    tied = bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))
    embeddings = vocab * hidden * (1 if tied else 2) * dtype_bytes
    tower = facts.vision or vision_from_config(config)
    vision = (vision_params(tower, hidden) if tower is not None else 0) * dtype_bytes
    total = int(layers + mtp + embeddings + vision)
    return WeightBytes(total=total, vision=int(vision), mtp=int(mtp), exact=False, basis=ESTIMATED)
