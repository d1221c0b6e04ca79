"""Model facts: what a checkpoint is made of, as far as serving memory and parallelism care.

Facts come from a ``config.json`` (``servekit.facts.config``), the safetensors headers of the
checkpoint (``servekit.facts.safetensors``), or the facts shipped with servekit for the recipes
in the bundled catalog (``servekit.facts.shipped``). They are plain, frozen, JSON round-trippable
dataclasses; ``from_json`` checks keys and types and names the offending key on bad input.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from servekit.facts.json_fields import from_json_fields, to_json_fields

LayerKind = Literal["full", "sliding", "linear", "mla", "none"]
"""How one decoder layer keeps context: a full KV cache, a KV cache bounded by a sliding
window, a constant-size recurrent state (linear attention / Mamba / short convolution), an MLA
latent, or nothing at all (an MLP-only layer of a hybrid stack)."""

LAYER_KINDS: tuple[str, ...] = ("full", "sliding", "linear", "mla", "none")
ATTENTION_KINDS: tuple[str, ...] = ("full", "sliding", "mla")


class _Json:
    """JSON round trip shared by the facts dataclasses: None fields are left out."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return to_json_fields(self)

    @classmethod
    def from_json(cls, data: Any, *, where: str = "facts JSON") -> Any:
        return from_json_fields(cls, data, where)


@dataclass(frozen=True, slots=True, kw_only=True)
class LinearAttentionFacts(_Json):
    """A constant-size state per sequence: a short convolution over ``conv_channels`` channels
    (keeping ``conv_kernel - 1`` steps) plus a recurrent state of ``state_heads`` heads of
    ``state_head_elems`` elements. Covers Gated DeltaNet, Mamba-1/2, short-conv and lightning
    attention layers."""

    mixer: str = "gated_deltanet"
    conv_channels: int
    conv_kernel: int
    state_heads: int
    state_head_elems: int
    split_heads: tuple[int, ...] = ()
    """Head counts tensor parallelism splits; each must be divisible by TP."""
    state_dtype: str | None = None
    """dtype of the recurrent (SSM) state; None means the model dtype."""
    projection_width: int = 0
    """The mixer's linear projections hold ``hidden_size x projection_width`` weights
    (``servekit.facts.linear``); 0 when the family's sizes do not give it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexerFacts(_Json):
    """A sparse-attention indexer that caches one key of ``head_dim`` values per token beside the
    attention KV of ``layers`` layers of ``kind`` (None: every one), the same on every TP rank:
    DeepSeek sparse attention (``index_head_dim``: DeepSeek-V3.2, GLM-5; FP8 values with an FP32 scale
    per 128 in ``uint8``, ``DeepseekV32IndexerCache``) or MiniMax-M3's (``sparse_index_dim`` on the
    layers ``sparse_attention_freq`` marks; BF16 by default, ``MiniMaxM3IndexerCache``)."""

    head_dim: int
    kind: str = "mla"
    layers: int | None = None
    scaled_fp8: bool = True
    """FP8 values plus an FP32 scale per 128 of them; False: BF16 values."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MLAFacts(_Json):
    """Multi-head latent attention: one compressed latent per token, shared by all heads."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    q_lora_rank: int | None = None
    """Rank of the query's down projection; None when queries are projected from the hidden
    state directly (DeepSeek-V2-Lite)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VisionFacts(_Json):
    """The vision tower (encoder) of a multimodal checkpoint, as far as the start-up profile of its
    dummy image cares: ``width`` x ``intermediate`` blocks run over the patches of one image, whose
    ``merge`` x ``merge`` patches become one language-model token of ``out_width`` (plus
    ``deepstack_levels`` more feature levels)."""

    width: int
    intermediate: int
    depth: int
    patch_size: int = 14
    in_channels: int = 3
    temporal_patch_size: int = 1
    merge: int = 1
    """Patches merged into one output token along each side (``spatial_merge_size``)."""
    out_width: int | None = None
    """Width of the output embeddings; None means the language model's hidden size."""
    deepstack_levels: int = 0
    image_size: int | None = None
    """Side in pixels of the largest image the tower takes (fixed-resolution towers); None for
    towers that take any size up to the processor's pixel budget (Qwen-VL style)."""
    tokens_per_image: int | None = None
    """Output tokens per image when the config states them (``mm_tokens_per_image``)."""
    gated_mlp: bool = False
    """A SiLU-gated MLP (gate, up and down projections) instead of fc1 -> activation -> fc2."""

    @property
    def pixels_per_patch(self) -> int:
        return self.in_channels * self.temporal_patch_size * self.patch_size * self.patch_size


@dataclass(frozen=True, slots=True, kw_only=True)
class MoEFacts(_Json):
    """The mixture-of-experts shape of a checkpoint."""

    num_experts: int
    experts_per_token: int | None = None
    moe_intermediate_size: int | None = None
    shared_experts: int = 0
    dense_layers: int = 0
    """The first layers, whose MLP is dense (``first_k_dense_replace``)."""
    dense_at: tuple[int, ...] = ()
    """Further layers with a dense MLP where the config interleaves them with the MoE layers
    (``servekit.facts.moe_config.interleaved_dense_layers``)."""
    modal_experts: tuple[tuple[int, int], ...] = ()
    """Further expert pools, ``(experts, width)`` each, that only another modality's tokens route
    to (ERNIE 4.5 VL's vision experts beside its text experts): weights every MoE layer holds, never
    read for a text token."""
    latent_size: int | None = None
    """Width the routed experts work in where it is not the hidden size (``moe_latent_size``:
    Nemotron-3's LatentMoE projects each token to it before the experts and back after,
    ``fc1_latent_proj`` / ``fc2_latent_proj``; the router and the shared experts read the hidden state)."""
    dense_intermediate_size: int | None = None
    """Width of those dense MLPs where it is not ``intermediate_size`` (``intermediate_size_mlp``:
    Llama 4, whose ``intermediate_size`` is an expert's)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuantFacts(_Json):
    """How a checkpoint is quantised (its ``quantization_config``)."""

    method: str
    """``quant_method`` of the checkpoint (fp8, modelopt, compressed-tensors, ...)."""
    algo: str | None = None
    weight_block_size: tuple[int, ...] | None = None
    kv_cache_scheme: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightBytes(_Json):
    """Bytes of the checkpoint's tensors; ``vision`` and ``mtp`` are parts of ``total``."""

    total: int
    vision: int = 0
    mtp: int = 0
    exact: bool = True
    """False when the figure is a rounded public number or an estimate, not summed tensor sizes."""
    basis: str | None = None
    """Where an inexact figure comes from (``estimated from config.json``); None: headers or a
    public figure the facts' ``source`` names."""
    estimated: tuple[str, ...] = ()
    """Parts (``vision``, ``mtp``) whose bytes are estimates, though ``total`` may be exact."""

    @property
    def language(self) -> int:
        return self.total - self.vision - self.mtp


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFacts(_Json):
    """What a plan needs to know about a checkpoint, read from its config and weight headers."""

    model_id: str | None = None
    source: str = ""
    """Where the facts were read from: a path, or the public documents they were taken from."""
    architecture: str | None = None
    model_type: str | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int | None = None
    tied_embeddings: bool = False
    """The LM head shares the input embedding's weights (``tie_word_embeddings``)."""
    max_position_embeddings: int | None = None
    dtype: str = "bfloat16"
    layers: tuple[LayerKind, ...]
    kv_shared_layers: int = 0
    """The last layers that reuse the KV cache of an earlier layer of their kind and keep none
    of their own (``num_kv_shared_layers``: Gemma 3n, Gemma 4)."""
    full_head_dim: int | None = None
    """Head size of the full-attention layers where it differs from the sliding ones'
    (``global_head_dim``: Gemma 4); None: ``head_dim``."""
    value_head_dim: int | None = None
    """A value head's size where it differs from a key head's (MiMo-V2: keys of 192, values of
    128, which vLLM's diff-KV attention backends cache apart); None: ``head_dim``."""
    full_kv_heads: int | None = None
    """KV heads of the full-attention layers where they differ (``num_global_key_value_heads``)."""
    sliding_window: int | None = None
    linear: LinearAttentionFacts | None = None
    mla: MLAFacts | None = None
    indexer: IndexerFacts | None = None
    """A sparse-attention indexer's key cache beside the attention layers' KV; None without one."""
    unmodelled: tuple[str, ...] = ()
    """Attention variants the config states that the memory model does not cover, each named with
    what the KV figures assume in its place."""
    split_blocks: bool = False
    """Each layer is a mixer or an MLP, never both (``hybrid_override_pattern``: Nemotron-H's
    ``M`` Mamba, ``*`` attention, ``-`` MLP and ``E`` MoE blocks, ``vllm/model_executor/models/nemotron_h.py``);
    False: every layer holds its mixer and an MLP (a ``none`` layer only the MLP)."""
    mlp_projections: int = 3
    """Weight matrices per MLP and per expert: 3 for a gated MLP (gate, up, down), 2 for an
    ungated one (``mlp_hidden_act`` ``relu2``: Nemotron-H's up and down projections)."""
    mtp_layers: int = 0
    moe: MoEFacts | None = None
    quantization: QuantFacts | None = None
    weights: WeightBytes | None = None
    has_vision: bool = False
    vision: VisionFacts | None = None
    """The vision tower's shape, when the config states it (``vision_config``)."""

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def holds_mlp(self, index: int) -> bool:
        """Whether layer ``index`` has an MLP (or a MoE block): every layer does, but a mixer
        block of ``split_blocks``; an index past the decoder (an MTP head's layer) has one."""
        return not self.split_blocks or index >= self.num_layers or self.layers[index] == "none"

    def holds_experts(self, index: int) -> bool:
        """Whether layer ``index``'s MLP is a MoE block (not one of ``MoEFacts``' dense layers)."""
        moe = self.moe
        return (moe is not None and self.holds_mlp(index) and index >= moe.dense_layers
                and index not in moe.dense_at)

    def expert_layers(self) -> int:
        """Layers holding routed experts."""
        return sum(self.holds_experts(i) for i in range(self.num_layers))

    @property
    def expert_width(self) -> int | None:
        """The width a routed expert projects from and back to: ``MoEFacts.latent_size``, else the
        hidden size."""
        return (self.moe.latent_size if self.moe is not None else None) or self.hidden_size

    @property
    def dense_mlp_width(self) -> int | None:
        """Width of a dense MLP layer: ``MoEFacts.dense_intermediate_size`` where it differs,
        else ``intermediate_size``."""
        return (self.moe.dense_intermediate_size if self.moe is not None else None) or self.intermediate_size

    def has_dense_mlp(self) -> bool:
        """Whether some layer's MLP is dense (every one is, without MoE)."""
        return any(self.holds_mlp(i) and not self.holds_experts(i) for i in range(self.num_layers))

    def layer_counts(self) -> dict[str, int]:
        return dict(Counter(self.layers))

    def cache_layer_counts(self) -> dict[str, int]:
        """Layers of each kind that keep a KV cache (the KV-sharing tail left out)."""
        keep = self.num_layers - min(self.kv_shared_layers, self.num_layers)
        return dict(Counter(self.layers[:keep]))
