"""KV-cache bytes per layer kind and the block-pool arithmetic of vLLM's hybrid allocator.

Per rank, each layer needs, per token or per sequence:

* full attention: ``2 x kv_heads_per_rank x head_dim x kv_bytes`` per token (Gemma 4's full
  layers have a head size and KV heads of their own: ``global_head_dim``);
* sliding window: the same per token, but a request never holds more than the window;
* MLA: one latent of ``kv_lora_rank + qk_rope_head_dim`` per token, replicated on every TP rank;
* linear attention (Gated DeltaNet / Mamba): a constant state per sequence: a convolution state
  ``conv_dim/tp x (kernel - 1 + spec_tokens)`` in the model dtype plus a recurrent state
  ``v_heads/tp x k_dim x v_dim`` in the state dtype.

Layers that reuse an earlier layer's KV cache (the ``num_kv_shared_layers`` tail of Gemma 3n and
Gemma 4, built with ``kv_sharing_target_layer_name``) keep none of their own.

vLLM pools memory in blocks that every layer group shares (a group of smaller pages, e.g.
narrower sliding-window heads, takes more tokens per block so that every page is the same size): layers of one kind are split into
groups of equal size, the attention block size is raised until one attention page holds a whole
linear-attention state, and every block costs ``group_size x page`` bytes. The reported pool in
tokens is ``num_blocks / blocks_per_request x max_model_len``.

Before the hybrid allocator (V0, and V1 before 0.9.1) every attention layer kept a full-length
cache: sliding-window layers are pooled as full attention (``KVOptions.sliding_as_full``).

The raised block size is a multiple of the kernel alignment: the larger of the backend's smallest
kernel block (16) and the configured block size, and at least 128 next to MLA
(``vllm/platforms/interface.py`` ``Platform._align_hybrid_block_size``).
"""

from __future__ import annotations

import math

from servekit.facts.model import ModelFacts
from servekit.fit.dtypes import dtype_bytes
from servekit.records import record

DEFAULT_BLOCK_SIZE = 16
BLOCK_ALIGNMENT = 16
MLA_HYBRID_ALIGNMENT = 128


@record
class KVOptions:
    """What sizes the KV cache of one rank: bytes per token, parallel sizes, context and block size."""

    kv_bytes: float
    tp: int = 1
    pp: int = 1
    max_model_len: int = 4096
    block_size: int | None = None
    spec_tokens: int = 0
    mtp_layers: int = 0
    """Draft layers that keep their own full-attention KV (in-checkpoint MTP)."""
    prefix_caching: bool = True
    max_num_batched_tokens: int = 8192
    context_parallel: int = 1
    sliding_as_full: bool = False
    """Pool sliding-window layers as full attention (V0, and V1 before the hybrid allocator)."""


@record
class LayerGroup:
    """Layers of one attention kind on one rank and what each holds per token or per sequence."""

    kind: str
    layers: int
    """Layers of this kind on one rank."""
    token_bytes: float = 0.0
    """Bytes per token per layer (attention kinds)."""
    state_bytes: int = 0
    """Bytes per sequence per layer (linear attention)."""
    window: int | None = None


@record
class PoolLayout:
    """How the KV pool is divided: its layer groups, block size and bytes per page."""

    groups: tuple[LayerGroup, ...]
    block_size: int
    page_bytes: int
    group_size: int
    num_groups: int
    blocks_per_request: int

    @property
    def block_bytes(self) -> int:
        return self.page_bytes * self.group_size

    @property
    def kv_bytes_per_token(self) -> float:
        """Attention bytes per token on one rank (all attention layers, no linear state)."""
        return sum(g.token_bytes * g.layers for g in self.groups if g.kind != "linear")

    def blocks_for(self, available_bytes: float) -> int:
        return int(available_bytes // self.block_bytes) if available_bytes > 0 else 0

    def tokens_for(self, available_bytes: float, max_model_len: int) -> int:
        """The pool as vLLM logs it: ``max_concurrency x max_model_len``."""
        return int(self.blocks_for(available_bytes) / self.blocks_per_request * max_model_len)

    def legacy_tokens_for(self, available_bytes: float, context_parallel: int = 1) -> int:
        """The pool as vLLM logged it before 0.21: blocks split evenly over the groups."""
        return self.blocks_for(available_bytes) // self.num_groups * self.block_size * context_parallel

    def bytes_for_one_request(self) -> int:
        return self.blocks_per_request * self.block_bytes


def kv_heads_per_rank(facts: ModelFacts, tp: int, kind: str = "full") -> int:
    """KV heads each TP rank stores; heads are replicated when TP exceeds their count."""
    heads = (facts.full_kv_heads or facts.num_kv_heads) if kind == "full" else facts.num_kv_heads
    return max(1, heads // tp) if heads >= tp else 1


INDEXER_QUANT_BLOCK = 128
"""Values per FP32 scale in DeepSeek's sparse-attention indexer key cache (vLLM's ``Indexer``:
``head_dim + head_dim // quant_block_size * 4`` bytes of ``uint8`` per token, ``quant_block_size``
128, ``vllm/model_executor/models/deepseek_v2.py``)."""


def indexer_token_bytes(facts: ModelFacts, kind: str = "mla") -> float:
    """Bytes per token an indexer adds to one layer of ``kind``, averaged over those layers when
    only some carry it (0 without one): its own cache spec beside the attention KV, whatever
    ``--kv-cache-dtype`` says, not split over TP ranks (``IndexerFacts``)."""
    indexer = facts.indexer
    if indexer is None or indexer.kind != kind:
        return 0.0
    head = indexer.head_dim
    per_layer = head + head // INDEXER_QUANT_BLOCK * 4 if indexer.scaled_fp8 else 2 * head
    count = facts.layers.count(kind)
    share = min(1.0, indexer.layers / count) if indexer.layers is not None and count else 1.0
    return per_layer * share


def attention_token_bytes(facts: ModelFacts, kind: str, kv_bytes: float, tp: int) -> float:
    if kind == "mla":
        assert facts.mla is not None
        return (facts.mla.kv_lora_rank + facts.mla.qk_rope_head_dim) * kv_bytes + indexer_token_bytes(facts)
    head_dim = (facts.full_head_dim or facts.head_dim) if kind == "full" else facts.head_dim
    heads = kv_heads_per_rank(facts, tp, kind)
    return heads * (head_dim + (facts.value_head_dim or head_dim)) * kv_bytes + indexer_token_bytes(facts, kind)


def linear_state_bytes(facts: ModelFacts, tp: int, spec_tokens: int = 0) -> int:
    """Bytes of one sequence's state in one constant-state layer on one rank."""
    lin = facts.linear
    if lin is None:
        return 0
    model_bytes = dtype_bytes(facts.dtype)
    state_bytes = dtype_bytes(lin.state_dtype or facts.dtype)
    conv = (lin.conv_channels // tp) * max(0, lin.conv_kernel - 1 + spec_tokens) * model_bytes
    recurrent = (lin.state_heads // tp) * lin.state_head_elems * state_bytes
    return int(conv + recurrent)


def layer_groups(facts: ModelFacts, opts: KVOptions) -> tuple[LayerGroup, ...]:
    counts = facts.cache_layer_counts()
    if opts.sliding_as_full and "sliding" in counts:
        counts["full"] = counts.get("full", 0) + counts.pop("sliding")
    if opts.mtp_layers:
        draft_kind = "mla" if "mla" in counts else "full"
        counts[draft_kind] = counts.get(draft_kind, 0) + opts.mtp_layers
    out = []
    for kind in ("full", "mla", "sliding", "linear"):
        n = counts.get(kind, 0)
        if not n:
            continue
        per_rank = math.ceil(n / opts.pp)
        if kind == "linear":
            out.append(LayerGroup(kind, per_rank, state_bytes=linear_state_bytes(facts, opts.tp, opts.spec_tokens)))
        else:
            out.append(
                LayerGroup(
                    kind,
                    per_rank,
                    token_bytes=attention_token_bytes(facts, kind, opts.kv_bytes, opts.tp),
                    window=facts.sliding_window if kind == "sliding" else None,
                )
            )
    return tuple(out)


def _group_size(groups: tuple[LayerGroup, ...]) -> int:
    sizes = [g.layers for g in groups]
    smallest, largest = min(sizes), max(sizes)
    return largest if largest < smallest * 1.5 else smallest


def _blocks_for(group: LayerGroup, block_size: int, opts: KVOptions) -> int:
    if group.kind == "linear":
        return (2 if opts.prefix_caching else 1) + opts.spec_tokens
    tokens = opts.max_model_len
    if group.kind == "sliding" and group.window:
        tokens = min(group.window - 1 + opts.max_num_batched_tokens, opts.max_model_len)
        return math.ceil(tokens / block_size) + 1
    return math.ceil(math.ceil(tokens / opts.context_parallel) / block_size)


def hybrid_block_size(block_size: int, token_bytes: float, state_bytes: int, mla: bool = False) -> int:
    """The attention block size once one attention page holds a whole linear-attention state."""
    alignment = max(BLOCK_ALIGNMENT, block_size, MLA_HYBRID_ALIGNMENT if mla else 0)
    return max(block_size, alignment * math.ceil(state_bytes / (alignment * token_bytes)))


def unified_block_size(group: LayerGroup, block_size: int, token_bytes: float) -> int:
    """The block size of an attention group once its page matches the largest page: a group of
    smaller pages gets proportionally more tokens per block when the page divides the largest,
    else it keeps ``block_size`` in a padded page (``unify_kv_cache_spec_page_size``)."""
    if group.kind == "linear" or not group.token_bytes or group.token_bytes >= token_bytes:
        return block_size
    ratio = token_bytes / group.token_bytes
    return block_size * int(ratio) if ratio == int(ratio) else block_size


def pool_layout(facts: ModelFacts, opts: KVOptions) -> PoolLayout:
    groups = layer_groups(facts, opts)
    if not groups:
        raise ValueError("model has no layers")
    attention = [g for g in groups if g.kind != "linear"]
    token_bytes = max((g.token_bytes for g in attention), default=0.0)
    block_size = opts.block_size or DEFAULT_BLOCK_SIZE
    state = max((g.state_bytes for g in groups if g.kind == "linear"), default=0)
    if state and token_bytes:
        block_size = hybrid_block_size(block_size, token_bytes, state, mla=any(g.kind == "mla" for g in attention))
    page = int(block_size * token_bytes) if token_bytes else state
    if len(groups) == 1 and groups[0].kind != "linear":
        size, per_kind = groups[0].layers, [(groups[0], 1)]
    else:
        size = _group_size(groups)
        per_kind = [(g, math.ceil(g.layers / size)) for g in groups]
    per_request = sum(n * _blocks_for(g, unified_block_size(g, block_size, token_bytes), opts) for g, n in per_kind)
    return PoolLayout(
        groups=groups,
        block_size=block_size,
        page_bytes=page,
        group_size=size,
        num_groups=sum(n for _, n in per_kind),
        blocks_per_request=per_request,
    )
