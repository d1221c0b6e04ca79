"""Mixture-of-experts facts from config keys: the expert pools, shared experts, and which layers
hold the routed experts as each family's vLLM decoder layer places them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from servekit.facts.config_keys import first_key
from servekit.facts.model import MoEFacts


def moe_from_config(cfg: dict[str, Any]) -> MoEFacts | None:
    """MoE facts from config keys; None without an expert count. A shared expert stated by its
    width (``shared_expert_intermediate_size``, Qwen2-MoE / Qwen3-Next: one ``shared_expert`` MLP of
    that width, ``vllm/model_executor/models/qwen3_next.py`` ``Qwen3NextSparseMoeBlock``;
    ``moe_shared_expert_intermediate_size``, Nemotron-3: ``n_shared_experts`` of that width,
    ``nemotron_h.py`` ``NemotronHMoE``) counts as that many routed experts' widths. Expert counts and
    widths given per modality (ERNIE 4.5 VL: ``moe_num_experts`` and ``moe_intermediate_size`` lists,
    text first, ``ernie45_vl_moe.py`` ``Ernie4_5_VLMoeMoE``) take the text pool as the routed one
    and the others as ``modal_experts``."""
    experts = first_key(cfg, "num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")
    inner = first_key(cfg, "moe_intermediate_size", "expert_intermediate_size")
    pools: list[tuple[int, int]] = []
    if isinstance(experts, list | tuple) and experts:
        widths = list(inner) if isinstance(inner, list | tuple) else [inner] * len(experts)
        pools = [(int(n), int(w or 0)) for n, w in zip(experts[1:], widths[1:], strict=False)]
        experts, inner = experts[0], widths[0]
    if not experts:
        return None
    shared = first_key(cfg, "n_shared_experts", "num_shared_experts", "moe_num_shared_experts")
    if shared is None and str(cfg.get("model_type") or "").startswith("llama4"):
        shared = 1  # llama4.py Llama4MoE: one shared_expert of the experts' width in every MoE layer
    shared_width = first_key(cfg, "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size")
    if shared_width and inner:
        shared = max(1, round((shared or 1) * shared_width / inner))
    return MoEFacts(
        num_experts=int(experts),
        experts_per_token=first_key(cfg, "num_experts_per_tok", "moe_topk", "experts_per_token", "moe_k"),
        moe_intermediate_size=inner,
        shared_experts=int(shared or 0),
        dense_layers=int(first_key(cfg, "first_k_dense_replace", "num_dense_layers") or 0),
        dense_at=interleaved_dense_layers(cfg),
        modal_experts=tuple(pools),
        latent_size=cfg.get("moe_latent_size"),
        dense_intermediate_size=cfg.get("intermediate_size_mlp"),
    )


def _int_or_ends(value: Any, pick: Callable[[list[int]], int]) -> int | None:
    if isinstance(value, list | tuple):
        return pick([int(v) for v in value]) if value else None
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def interleaved_dense_layers(cfg: dict[str, Any]) -> tuple[int, ...]:
    """Layers whose MLP stays dense between MoE layers, as each family's vLLM decoder layer places
    its MoE blocks (layer ``i`` counted from 0):

    * Qwen2/3-MoE (``qwen3_moe.py``): dense where ``i`` is in ``mlp_only_layers`` or ``(i + 1)`` is
      not a multiple of ``decoder_sparse_step``;
    * Llama 4 (``llama4.py``): MoE where ``(i + 1)`` is a multiple of ``interleave_moe_layer_step``;
    * ERNIE 4.5 (``ernie45_moe.py``): MoE where ``(i + 1)`` is a multiple of ``moe_layer_interval``
      and ``moe_layer_start_index <= i <= moe_layer_end_index`` (lists: their lowest start, highest end);
    * DeepSeek-V2/V3 (``deepseek_v2.py``): past ``first_k_dense_replace``, MoE where ``i`` is a
      multiple of ``moe_layer_freq`` (a list: MoE where its entry is non-zero);
    * Jamba (``jamba.py``): MoE where ``i - expert_layer_offset`` is a multiple of ``expert_layer_period``.
    """
    raw = first_key(cfg, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if not isinstance(raw, int | float) or isinstance(raw, bool) or raw < 1:
        return ()
    layers = range(int(raw))
    dense: set[int] = set()
    only = cfg.get("mlp_only_layers")
    if isinstance(only, list):
        dense |= {int(i) for i in only if isinstance(i, int)}
    step = cfg.get("decoder_sparse_step")
    if isinstance(step, int) and step > 1:
        dense |= {i for i in layers if (i + 1) % step}
    step = cfg.get("interleave_moe_layer_step")
    if isinstance(step, int) and step > 1:
        dense |= {i for i in layers if (i + 1) % step}
    if any(k in cfg for k in ("moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval")):
        start = _int_or_ends(cfg.get("moe_layer_start_index"), min) or 0
        end = _int_or_ends(cfg.get("moe_layer_end_index"), max)
        end = len(layers) - 1 if end is None else end
        interval = int(cfg.get("moe_layer_interval") or 1)
        dense |= {i for i in layers if (i + 1) % interval or not start <= i <= end}
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list) and len(freq) == len(layers):
        dense |= {i for i in layers if not freq[i]}
    elif isinstance(freq, int) and freq > 1:
        dense |= {i for i in layers if i % freq}
    period = cfg.get("expert_layer_period")
    if isinstance(period, int) and period > 1:
        offset = int(cfg.get("expert_layer_offset") or 0)
        dense |= {i for i in layers if (i - offset) % period}
    return tuple(sorted(dense))
