"""Constant-state layers (linear attention, Mamba, short convolutions) from config keys.

Each family names its sizes differently; all reduce to a convolution state of
``conv_channels x (conv_kernel - 1)`` and a recurrent state of ``state_heads x state_head_elems``:

* Gated DeltaNet (Qwen3-Next, Qwen3.5+): ``linear_num_{key,value}_heads``, ``linear_{key,value}_head_dim``;
* Mamba-2 (Nemotron-H, Granite 4, Bamba, Falcon-H1): ``mamba_num_heads``/``mamba_n_heads``,
  ``mamba_head_dim``/``mamba_d_head``, ``ssm_state_size``/``mamba_d_state``, ``n_groups``;
* Mamba-1 (Jamba): ``mamba_expand x hidden_size`` channels with ``mamba_d_state`` each;
* short convolution (LFM2): ``conv_L_cache`` over ``hidden_size`` channels, no recurrent state;
* lightning attention (MiniMax-Text-01): ``heads x head_dim x head_dim`` state, no convolution;
* Kimi Delta Attention (Kimi-Linear, ``linear_attn_config``): short convolutions over q, k and v
  (``3 x heads x head_dim`` channels, ``short_conv_kernel_size``) and a ``heads x head_dim x
  head_dim`` recurrent state, kept in float32 unless the config says otherwise (vLLM's
  ``MambaStateDtypeCalculator.kda_state_dtype``); Ling/Ring 3 (``BailingMoeV3``) run the same
  mixer with ``num_attention_heads`` heads of ``head_dim`` (``bailing_moe_v3.py``);
* Ling/Ring 2.5/2.6 (``BailingMoeV2_5``): lightning attention's ``heads x head_dim x head_dim``
  state in the model dtype (``bailing_moe_linear.py``).

Their linear projections (what an estimate from config.json prices, ``projection_width``) follow
vLLM's layers: Gated DeltaNet projects the hidden state to ``q, k, v, z`` (``2 K + 2 V``, with
``K = key heads x key dim`` and ``V = value heads x value dim``) and to ``b, a`` (``2 x value
heads``) and back from ``V`` (``Qwen3NextGatedDeltaNet`` in ``vllm/model_executor/models/qwen3_next.py``:
``in_proj_qkvz``/``in_proj_ba``, ``out_proj``); Mamba-2 projects to the gate and ``x`` (``2 I``,
``I = heads x head dim``), ``B`` and ``C`` (``2 x groups x state size``) and ``dt`` (``heads``) and
back from ``I`` (``MambaMixer2`` in ``vllm/model_executor/layers/mamba/mamba_mixer2.py``); the short
convolution to ``3 x hidden`` and back (``Lfm2ShortConv``); Kimi Delta Attention as
``kda_projection_width`` reads ``KimiDeltaAttention``. The convolution weights, norms and per-head
scalars are left out (under 0.1% of a mixer). Ling/Ring 3's KDA and lightning layers are not read
from their code yet: their estimate takes the four ``hidden x hidden`` assumption
(``servekit.facts.estimate``).

The recurrent state is kept in ``mamba_ssm_dtype`` when the config states it, else (``state_dtype``
None) in the model dtype, as vLLM sizes it: ``MambaStateDtypeCalculator.gated_delta_net_state_dtype``
(``vllm/model_executor/layers/mamba/mamba_utils.py``) takes the conv dtype (the model's, or
``--mamba-cache-dtype``) for both states unless ``mamba_ssm_cache_dtype`` is set, which
``--mamba-ssm-cache-dtype`` does, and which the Qwen3.5 family's model config copies from its
config.json (``Qwen3_5ForConditionalGenerationConfig`` in ``vllm/model_executor/models/config.py``:
``"mamba_ssm_dtype": "float32"`` in every ``qwen3_5_text`` config). Qwen3-Next's config states no
such key: its state follows the model dtype (a Qwen3-Next-80B launch with ``--dtype float16`` at
0.11 logs 90,048 tokens = 84 blocks of 1,072 tokens, the block a float16 state implies).
"""

from __future__ import annotations

from typing import Any

from servekit.facts.config_keys import first_key
from servekit.facts.model import LinearAttentionFacts


def gated_deltanet(key_heads: int, value_heads: int, key_dim: int, value_dim: int, kernel: int = 4,
                   state_dtype: str | None = None) -> LinearAttentionFacts:
    keys, values = key_heads * key_dim, value_heads * value_dim
    return LinearAttentionFacts(
        mixer="gated_deltanet",
        conv_channels=2 * keys + values,
        conv_kernel=kernel,
        state_heads=value_heads,
        state_head_elems=key_dim * value_dim,
        split_heads=(key_heads, value_heads),
        state_dtype=state_dtype,
        projection_width=2 * keys + 3 * values + 2 * value_heads,
    )


def mamba2(heads: int, head_dim: int, state_size: int, groups: int = 1, kernel: int = 4,
           state_dtype: str | None = None) -> LinearAttentionFacts:
    inner = heads * head_dim
    return LinearAttentionFacts(
        mixer="mamba2",
        conv_channels=inner + 2 * groups * state_size,
        conv_kernel=kernel,
        state_heads=heads,
        state_head_elems=head_dim * state_size,
        split_heads=(heads,) + ((groups,) if groups > 1 else ()),
        state_dtype=state_dtype,
        projection_width=3 * inner + 2 * groups * state_size + heads,
    )


BAILING_HYBRIDS = ("BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration")
"""Architectures whose ``layer_group_size`` interleaves linear layers with MLA ones (Ling/Ring 2.5+;
vLLM's registry maps them to ``bailing_moe_linear.py`` and ``bailing_moe_v3*.py``)."""


def bailing_v3(cfg: dict[str, Any]) -> bool:
    """Whether a Bailing hybrid is a V3 one (KDA, ``bailing_moe_v3*.py``) rather than V2.5 (lightning)."""
    return any(str(a).startswith("BailingMoeV3") for a in cfg.get("architectures") or [])


def bailing_group(cfg: dict[str, Any]) -> int:
    """``layer_group_size`` of a Bailing hybrid (0 for any other model)."""
    architectures = cfg.get("architectures") or []
    group = cfg.get("layer_group_size")
    if isinstance(group, int) and group > 0 and any(a in BAILING_HYBRIDS for a in architectures):
        return group
    return 0


def kda_layers(cfg: dict[str, Any]) -> set[int]:
    """Layers (counted from 1) that run Kimi Delta Attention (``linear_attn_config.kda_layers``)."""
    linear = cfg.get("linear_attn_config")
    layers = linear.get("kda_layers") if isinstance(linear, dict) else None
    return {int(i) for i in layers} if isinstance(layers, list) else set()


def kda_projection_width(hidden: int, heads: int, head_dim: int) -> int:
    """``projection_width`` of a Kimi Delta Attention layer (``KimiDeltaAttention`` in
    ``vllm/model_executor/layers/kda.py``): with ``P = heads x head_dim``, ``q, k, v`` and ``o``
    (``4 P``), the low-rank decay and output-gate projections' first halves (``2 x head_dim``) and
    ``beta`` (``heads``) on the hidden side, plus their second halves (``2 x head_dim x P`` weights,
    counted in whole ``hidden``-wide columns)."""
    projection = heads * head_dim
    return 4 * projection + 2 * head_dim + heads + round(2 * head_dim * projection / hidden)


def kimi_delta(heads: int, head_dim: int, kernel: int = 4, state_dtype: str | None = None,
               hidden: int = 0) -> LinearAttentionFacts:
    """Kimi Delta Attention: short convolutions over q, k and v, a float32 state unless stated;
    its projections priced when ``hidden`` is given (``kda_projection_width``)."""
    return LinearAttentionFacts(
        mixer="kda", conv_channels=3 * heads * head_dim, conv_kernel=kernel, state_heads=heads,
        state_head_elems=head_dim * head_dim, split_heads=(heads,), state_dtype=state_dtype or "float32",
        projection_width=kda_projection_width(hidden, heads, head_dim) if hidden > 0 else 0,
    )


def lightning(heads: int, head_dim: int, state_dtype: str | None = None) -> LinearAttentionFacts:
    """Lightning attention: a ``head_dim x head_dim`` state per head, no convolution."""
    return LinearAttentionFacts(
        mixer="lightning", conv_channels=0, conv_kernel=1, state_heads=heads,
        state_head_elems=head_dim * head_dim, split_heads=(heads,), state_dtype=state_dtype,
    )


def linear_from_config(cfg: dict[str, Any], heads: int, head_dim: int) -> LinearAttentionFacts | None:
    """The constant-state layer facts a (language) config describes, or None."""
    dtype = first_key(cfg, "mamba_ssm_dtype", "mamba_ssm_cache_dtype")
    if cfg.get("linear_num_value_heads") is not None:
        return gated_deltanet(
            int(cfg["linear_num_key_heads"]), int(cfg["linear_num_value_heads"]),
            int(cfg["linear_key_head_dim"]), int(cfg["linear_value_head_dim"]),
            int(cfg.get("linear_conv_kernel_dim", 4)), dtype,
        )
    kda = cfg.get("linear_attn_config")
    if kda_layers(cfg) and kda.get("num_heads") and kda.get("head_dim"):
        return kimi_delta(int(kda["num_heads"]), int(kda["head_dim"]), int(kda.get("short_conv_kernel_size") or 4),
                          dtype, int(cfg.get("hidden_size") or 0))
    if bailing_group(cfg):
        b_dim = int(cfg.get("head_dim") or int(cfg["hidden_size"]) // heads)
        if bailing_v3(cfg):
            return kimi_delta(heads, b_dim, int(cfg.get("short_conv_kernel_size") or 4), dtype)
        return lightning(heads, b_dim, dtype)
    m_heads = first_key(cfg, "mamba_num_heads", "mamba_n_heads")
    if m_heads is not None:
        return mamba2(
            int(m_heads), int(first_key(cfg, "mamba_head_dim", "mamba_d_head")),
            int(first_key(cfg, "ssm_state_size", "mamba_d_state", "state_size")),
            int(first_key(cfg, "n_groups", "mamba_n_groups") or 1),
            int(first_key(cfg, "conv_kernel", "mamba_d_conv") or 4), dtype,
        )
    if cfg.get("mamba_expand") and cfg.get("mamba_d_state") and cfg.get("hidden_size"):
        channels = int(cfg["mamba_expand"]) * int(cfg["hidden_size"])
        return LinearAttentionFacts(
            mixer="mamba", conv_channels=channels, conv_kernel=int(cfg.get("mamba_d_conv") or 4),
            state_heads=channels, state_head_elems=int(cfg["mamba_d_state"]), split_heads=(channels,),
            state_dtype=dtype,
        )
    if cfg.get("conv_L_cache") and cfg.get("hidden_size"):
        return LinearAttentionFacts(
            mixer="short_conv", conv_channels=int(cfg["hidden_size"]), conv_kernel=int(cfg["conv_L_cache"]),
            state_heads=0, state_head_elems=0, projection_width=4 * int(cfg["hidden_size"]),
        )
    if cfg.get("attn_type_list"):
        return lightning(heads, head_dim, dtype or "float32")
    return None
