"""Read a Hugging Face ``config.json`` (as a dict) into ``ModelFacts``.

Multimodal configs keep the language model under ``text_config`` (or ``llm_config`` /
``language_config``); its fields win over the top level. Layer kinds come, in order of
preference, from ``layer_types``, ``full_attention_interval`` (hybrid linear attention),
``sliding_window_pattern`` (local/global interleave), MLA (``kv_lora_rank``), and a global
``sliding_window`` that is switched on.
"""

from __future__ import annotations

from typing import Any

from servekit.errors import ServekitError
from servekit.facts.config_keys import first_key
from servekit.facts.linear import bailing_group, bailing_v3, kda_layers, linear_from_config
from servekit.facts.moe_config import moe_from_config
from servekit.facts.vision import VISION_CONFIG_KEYS, vision_from_config
from servekit.facts.model import (
    IndexerFacts,
    LayerKind,
    MLAFacts,
    ModelFacts,
    QuantFacts,
)

TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config")

_LAYER_TYPE_NAMES: dict[str, LayerKind] = {
    "full_attention": "full",
    "attention": "full",
    "global": "full",
    "sliding_attention": "sliding",
    "sliding_window": "sliding",
    "local": "sliding",
    "chunked_attention": "sliding",
    "linear_attention": "linear",
    "mamba": "linear",
    "mamba2": "linear",
    "gated_deltanet": "linear",
    "linear": "linear",
    "conv": "linear",
    "short_conv": "linear",
    "mlp": "none",
    "moe": "none",
    "deepseek_sparse_attention": "mla",  # GLM-5.2's layer_types: MLA with DeepSeek's sparse-attention indexer
}
_PATTERN_CHARS: dict[str, LayerKind] = {"M": "linear", "*": "full", "-": "none", "E": "none"}


class ConfigFactsError(ServekitError):
    """A config.json lacks what servekit needs to plan memory for it."""


CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "tie_word_embeddings": True, "sliding_window_pattern": 6},
}
"""Keys a config.json leaves out when they equal its configuration class's defaults (transformers'
``save_pretrained`` writes only what differs), by ``model_type``: Gemma 3's text config
(``Gemma3TextConfig``: a 262,208-token vocabulary, embeddings tied to the output head, five
sliding-window layers to each global one) omits all three in google/gemma-3-27b-it."""


def language_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language-model part of a config: ``text_config`` merged over the top level, with the
    ``CLASS_DEFAULTS`` of its ``model_type`` for the keys neither states."""
    merged = config
    for key in TEXT_CONFIG_KEYS:
        inner = config.get(key)
        if isinstance(inner, dict):
            merged = {k: v for k, v in config.items() if k not in TEXT_CONFIG_KEYS}
            merged.update({k: v for k, v in inner.items() if v is not None})
            break
    defaults = CLASS_DEFAULTS.get(str(merged.get("model_type") or ""), {})
    missing = {k: v for k, v in defaults.items() if merged.get(k) is None}
    return {**merged, **missing} if missing else merged


def layer_kinds(cfg: dict[str, Any], num_layers: int, where: str = "config") -> list[LayerKind]:
    """The kind of each decoder layer, from the keys a config uses to describe them
    (``layers_block_type``: Nemotron-H's blocks named, as newer Nemotron configs give them in place
    of ``hybrid_override_pattern``)."""
    types = cfg.get("layer_types") or cfg.get("layers_block_type")
    if isinstance(types, list) and types:
        kinds: list[LayerKind] = []
        for name in types[:num_layers]:
            kind = _LAYER_TYPE_NAMES.get(str(name))
            if kind is None:
                raise ConfigFactsError(
                    f"{where}: unknown layer type {name!r} in layer_types",
                    fix="describe the model with a facts JSON file instead",
                )
            kinds.append(kind)
        if len(kinds) == num_layers:
            return kinds
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) == num_layers and set(pattern) <= set(_PATTERN_CHARS):
        return [_PATTERN_CHARS[ch] for ch in pattern]
    group = bailing_group(cfg)
    if group:
        # Bailing hybrids: bailing_moe_linear.py (V2.5) runs lightning attention except where (i + 1) is a
        # multiple of layer_group_size; bailing_moe_v3.py (V3) runs KDA there too, but also keeps the
        # layers past the last whole group as MLA
        whole = num_layers // group * group if bailing_v3(cfg) else num_layers
        full: LayerKind = "mla" if cfg.get("kv_lora_rank") else "full"
        return [full if (i + 1) % group == 0 or i >= whole else "linear" for i in range(num_layers)]
    kda = kda_layers(cfg)
    if kda:
        # Kimi-Linear (KimiLinearConfig.is_kda_layer): linear_attn_config.kda_layers counts layers from 1
        other: LayerKind = "mla" if cfg.get("kv_lora_rank") else "full"
        return ["linear" if i + 1 in kda else other for i in range(num_layers)]
    flags = cfg.get("hybrid_layer_pattern")
    if isinstance(flags, list) and len(flags) == num_layers and set(flags) <= {0, 1}:
        # MiMo-V2 (mimo_v2_flash.py): 1 marks a sliding-window layer, 0 a full-attention one
        return ["sliding" if flag else "full" for flag in flags]
    if cfg.get("attn_layer_period"):
        period, offset = int(cfg["attn_layer_period"]), int(cfg.get("attn_layer_offset") or 0)
        return ["full" if i % period == offset else "linear" for i in range(num_layers)]
    types = cfg.get("attn_type_list")
    if isinstance(types, list) and len(types) == num_layers:
        return ["full" if int(t) == 1 else "linear" for t in types]
    if cfg.get("kv_lora_rank"):
        return ["mla"] * num_layers
    rope_layers = cfg.get("no_rope_layers")
    if cfg.get("attention_chunk_size") and isinstance(rope_layers, list) and len(rope_layers) == num_layers:
        # Llama 4: RoPE layers attend within chunks (bounded like a window), NoPE layers globally
        return ["sliding" if int(flag) else "full" for flag in rope_layers]
    interval = cfg.get("full_attention_interval")
    if interval:
        return ["full" if (i + 1) % int(interval) == 0 else "linear" for i in range(num_layers)]
    window = cfg.get("sliding_window")
    pattern = cfg.get("sliding_window_pattern")
    if window and pattern:
        return ["full" if (i + 1) % int(pattern) == 0 else "sliding" for i in range(num_layers)]
    if window and cfg.get("use_sliding_window", True):
        max_window_layers = cfg.get("max_window_layers")
        if max_window_layers is not None and "use_sliding_window" in cfg:
            return ["sliding" if i >= int(max_window_layers) else "full" for i in range(num_layers)]
        return ["sliding"] * num_layers
    return ["full"] * num_layers


def mla_from_config(cfg: dict[str, Any]) -> MLAFacts:
    """MLA facts from config keys (``kv_lora_rank`` and ``qk_rope_head_dim`` required)."""
    q_rank = cfg.get("q_lora_rank")
    return MLAFacts(kv_lora_rank=int(cfg["kv_lora_rank"]), qk_rope_head_dim=int(cfg["qk_rope_head_dim"]),
                    q_lora_rank=int(q_rank) if q_rank else None)


def unmodelled_attention(cfg: dict[str, Any]) -> tuple[str, ...]:
    """What ``ModelFacts.unmodelled`` names: DeepSeek-V4's compressed sparse attention
    (``compress_ratios``: most layers keep one compressed KV entry per 4 or 128 tokens beside a
    sliding window, with an indexer) is planned as the sliding window alone, which keeps less than
    the engine does for long contexts."""
    if cfg.get("compress_ratios"):
        return (f"compressed sparse attention (compress_ratios): every layer's KV is planned as its "
                f"{cfg.get('sliding_window')}-token sliding window alone, without the compressed entries and "
                "the indexer's keys the engine also keeps",)
    return ()


def split_blocks(cfg: dict[str, Any]) -> bool:
    """Whether the config lays its layers out as single blocks (``ModelFacts.split_blocks``)."""
    return isinstance(cfg.get("hybrid_override_pattern"), str) or isinstance(cfg.get("layers_block_type"), list)


def mlp_projections(cfg: dict[str, Any]) -> int:
    """Weight matrices per MLP and expert (``ModelFacts.mlp_projections``): 2 for squared ReLU."""
    return 2 if cfg.get("mlp_hidden_act") == "relu2" else 3


def indexer_of(cfg: dict[str, Any], mla: bool) -> IndexerFacts | None:
    """The sparse-attention indexer a config states (``ModelFacts.indexer``): DeepSeek's beside every
    MLA layer (``index_head_dim`` with ``index_topk``), or MiniMax-M3's beside the full-attention
    layers its ``sparse_attention_config.sparse_attention_freq`` marks (``_sparse_attention_layer_ids``
    of ``vllm/models/minimax_m3``)."""
    if mla:
        return IndexerFacts(head_dim=int(cfg["index_head_dim"])) \
            if cfg.get("index_head_dim") and cfg.get("index_topk") else None
    sparse = cfg.get("sparse_attention_config")
    if not isinstance(sparse, dict) or not sparse.get("sparse_index_dim") or sparse.get("use_sparse_attention") is False:
        return None
    freq = sparse.get("sparse_attention_freq")
    layers = sum(1 for f in freq if f) if isinstance(freq, list) else None
    if layers == 0:
        return None
    return IndexerFacts(head_dim=int(sparse["sparse_index_dim"]), kind="full", layers=layers, scaled_fp8=False)


def quant_from_config(config: dict[str, Any], cfg: dict[str, Any] | None = None) -> QuantFacts | None:
    """The ``quantization_config`` of a config (or of its text config ``cfg``), None without one."""
    q = config.get("quantization_config") or (cfg or {}).get("quantization_config")
    if not isinstance(q, dict):
        return None
    block = q.get("weight_block_size")
    algo = q.get("quant_algo")
    if algo is None and isinstance(q.get("quantization"), dict):
        algo = q["quantization"].get("quant_algo")
    kv_scheme = q.get("kv_cache_quant_algo") or (
        q["kv_cache_scheme"].get("type") if isinstance(q.get("kv_cache_scheme"), dict) else None
    )
    return QuantFacts(
        method=str(q.get("quant_method", "unknown")),
        algo=algo,
        weight_block_size=tuple(block) if block else None,
        kv_cache_scheme=kv_scheme,
    )


def facts_from_config(config: dict[str, Any], *, model_id: str | None = None, source: str = "") -> ModelFacts:
    """Model facts from a parsed config.json; raises ConfigFactsError when a key is missing or unreadable."""
    where = source or "config.json"
    try:
        return _facts(config, model_id, source, where)
    except KeyError as exc:
        raise ConfigFactsError(f"{where}: no {exc.args[0]!r}, which this model's layers need") from None
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise ConfigFactsError(
            f"{where}: a shape value cannot be read ({exc})",
            fix="check the numbers in config.json (layer, head and size counts are positive integers)",
        ) from None


def _positive(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1 or value != int(value):
        raise ConfigFactsError(f"{where}: {key} is {value!r}, not a positive integer")
    return int(value)


def _facts(config: dict[str, Any], model_id: str | None, source: str, where: str) -> ModelFacts:
    cfg = language_config(config)
    num_layers = first_key(cfg, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if num_layers is None and isinstance(cfg.get("layers_block_type"), list):
        num_layers = len(cfg["layers_block_type"])  # Nemotron-3 Ultra states its blocks, not their count
    heads = first_key(cfg, "num_attention_heads", "n_head", "num_heads")
    if num_layers is None or heads is None:
        raise ConfigFactsError(
            f"{where}: no num_hidden_layers / num_attention_heads (model_type "
            f"{cfg.get('model_type')!r})",
            fix="pass the directory of a decoder LLM checkpoint, or a facts JSON file",
        )
    num_layers = _positive(num_layers, "num_hidden_layers", where)
    heads = _positive(heads, "num_attention_heads", where)
    hidden = cfg.get("hidden_size")
    # Step-3.5/3.7 name their KV heads num_attention_groups (vLLM's step3p5.py reads it)
    kv_heads = first_key(cfg, "num_key_value_heads", "multi_query_group_num", "num_kv_heads", "num_attention_groups") or heads
    kv_heads = _positive(kv_heads, "num_key_value_heads", where)
    head_dim = cfg.get("head_dim")
    if head_dim is None:
        if not hidden:
            raise ConfigFactsError(f"{where}: neither head_dim nor hidden_size is set")
        head_dim = _positive(hidden, "hidden_size", where) // heads
    head_dim = _positive(head_dim, "head_dim", where)
    full_kv = _positive(cfg["num_global_key_value_heads"], "num_global_key_value_heads", where) \
        if cfg.get("num_global_key_value_heads") else None
    full_dim = _positive(cfg["global_head_dim"], "global_head_dim", where) if cfg.get("global_head_dim") else None
    if cfg.get("swa_num_key_value_heads") or cfg.get("swa_head_dim"):
        # MiMo-V2: the plain keys size the full-attention layers, swa_* the sliding ones
        swa_kv = _positive(cfg.get("swa_num_key_value_heads") or kv_heads, "swa_num_key_value_heads", where)
        swa_dim = _positive(cfg.get("swa_head_dim") or head_dim, "swa_head_dim", where)
        full_kv, full_dim = (kv_heads if kv_heads != swa_kv else None), (head_dim if head_dim != swa_dim else None)
        kv_heads, head_dim = swa_kv, swa_dim
    kinds = layer_kinds(cfg, int(num_layers), where)
    mla = None
    if "mla" in kinds:
        mla = mla_from_config(cfg)
    linear = linear_from_config(cfg, int(heads), int(head_dim))
    if "linear" in kinds and linear is None:
        raise ConfigFactsError(f"{where}: linear-attention layers without linear_* head sizes")
    dtype = first_key(cfg, "torch_dtype", "dtype") or config.get("torch_dtype") or "bfloat16"
    architectures = config.get("architectures") or cfg.get("architectures") or [None]
    window = cfg.get("sliding_window") if "sliding" in kinds else None
    if window is None and "sliding" in kinds:
        window = cfg.get("attention_chunk_size")
    return ModelFacts(
        model_id=model_id,
        source=source,
        architecture=architectures[0],
        model_type=cfg.get("model_type") or config.get("model_type"),
        hidden_size=hidden,
        intermediate_size=cfg.get("intermediate_size"),
        num_attention_heads=int(heads),
        num_kv_heads=int(kv_heads),
        head_dim=int(head_dim),
        vocab_size=cfg.get("vocab_size") or config.get("vocab_size"),
        tied_embeddings=bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False))),
        max_position_embeddings=cfg.get("max_position_embeddings"),
        dtype=str(dtype),
        layers=tuple(kinds),
        kv_shared_layers=int(cfg.get("num_kv_shared_layers") or 0),
        full_head_dim=full_dim,
        full_kv_heads=full_kv,
        value_head_dim=first_key(cfg, "v_head_dim", "swa_v_head_dim") if mla is None else None,
        sliding_window=int(window) if window else None,
        linear=linear,
        mla=mla,
        indexer=indexer_of(cfg, mla is not None),
        unmodelled=unmodelled_attention(cfg),
        split_blocks=split_blocks(cfg),
        mlp_projections=mlp_projections(cfg),
        mtp_layers=int(first_key(cfg, "mtp_num_hidden_layers", "num_nextn_predict_layers") or 0),
        moe=moe_from_config(cfg),
        quantization=quant_from_config(config, cfg),
        has_vision=any(isinstance(config.get(k), dict) for k in VISION_CONFIG_KEYS),
        vision=vision_from_config(config),
    )
