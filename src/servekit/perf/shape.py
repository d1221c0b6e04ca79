"""What the speed model needs of a model: parameters, routed experts, weight and KV bytes.

Bytes per parameter follow the checkpoint's number format (``FORMAT_BYTES``); a routed-expert
MoE layer holds ``experts x 3 x hidden x moe_intermediate`` parameters (gate, up and down
projections of each expert, as the Mixtral/DeepSeek/Qwen-MoE configs define them).
"""

from __future__ import annotations

from servekit.records import record

FORMAT_BYTES: dict[str, float] = {
    "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0,
    "nvfp4": 0.5625, "mxfp4": 0.53125, "int4": 0.5625, "awq": 0.5625, "gptq": 0.5625,
}
"""Bytes per weight: NVFP4 is 4 bits plus one FP8 scale per 16 values (NVIDIA's NVFP4 format,
https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/),
MXFP4 4 bits plus one 8-bit scale per 32 (OCP Microscaling spec v1.0), INT4 (AWQ/GPTQ) 4 bits
plus a 16-bit scale and zero per group of 128, rounded up to NVFP4's figure."""

COMPUTE_FORMAT = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "nvfp4": "fp4", "mxfp4": "fp4"}
"""The tensor-core format a checkpoint format asks for; INT4/INT8 weight-only formats multiply in
BF16 (vLLM's Marlin, AWQ and GPTQ kernels dequantize to 16 bits)."""

EXPERTS_ONLY_FORMATS = ("mxfp4",)
"""Formats whose checkpoints quantize only the routed experts, keeping attention, router and
embeddings in BF16 (OpenAI gpt-oss model card, https://arxiv.org/abs/2508.10925: "MoE weights
quantized to MXFP4")."""

FORMAT_WORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("mxfp4",), "mxfp4"), (("nvfp4", "fp4"), "nvfp4"), (("fp8",), "fp8"), (("int8", "w8a8"), "int8"),
    (("awq",), "awq"), (("gptq",), "gptq"), (("int4", "w4a16", "w4"), "int4"), (("bf16", "bfloat16"), "bf16"),
    (("fp16", "float16", "half"), "fp16"),
)
"""How a format is spelled in points and configs, checked in order (``fp8_e4m3`` is FP8,
``w4a16`` INT4, ``bfloat16`` BF16)."""


def weights_format_of(text: str) -> str | None:
    """The format a spelling names (a key of ``FORMAT_BYTES``), or None."""
    lower = str(text).strip().lower()
    if lower in FORMAT_BYTES:
        return lower
    return next((fmt for words, fmt in FORMAT_WORDS if any(w in lower for w in words)), None)


ACTIVATION_BYTES = 2
"""Bytes per activation value moved between TP ranks (BF16 all-reduce)."""

LM_HEAD_BYTES = 2
"""Bytes per output-head weight (BF16: ``terms.lm_head_s``)."""


@record
class ModelShape:
    params_total: float
    params_active: float
    """Parameters one token multiplies through (the routed experts it picks, not all)."""
    expert_params: float
    """Parameters of all routed experts of all MoE layers (0 for a dense model)."""
    experts: int
    experts_per_token: int
    layers: int
    hidden: int
    heads: int
    attention_dim: int
    """Query-key plus value width of one attention head as a prompt is prefilled (2 x head_dim; MLA:
    qk_nope + qk_rope + v)."""
    kv_bytes_per_token: float
    """KV-cache bytes one token holds on one rank (``servekit.fit``)."""
    weights_format: str
    vocab: int = 0
    """Rows of the output head (``vocab_size``; 0: not known, no head read is counted apart)."""
    decode_attention_dim: int = 0
    """The same width as one decode token attends (0: ``attention_dim``). MLA decodes in the
    weight-absorbed form, attending the compressed latent itself: kv_lora_rank + qk_rope for the
    scores and kv_lora_rank for the values (DeepSeek-V2, https://arxiv.org/abs/2405.04434 section
    2.1; vLLM's MLA backends run prefill in the expanded form and decode in the absorbed one,
    vllm/v1/attention/backends/mla/common.py)."""

    embedding_params: float = 0.0
    """Parameters of the input embedding table when the output head has weights of its own
    (``tie_word_embeddings`` false): a step looks up only its tokens' rows of it (vLLM's
    ``VocabParallelEmbedding`` gathers rows, vllm/model_executor/layers/vocab_parallel_embedding.py),
    so it is not streamed; 0 when tied (the table is read whole as the output head) or unknown."""

    unread_params: float = 0.0
    """Parameters in ``params_total`` beside the routed experts that a text token never reads:
    another modality's expert pools (``MoEFacts.modal_experts``)."""

    @property
    def latent_attention(self) -> bool:
        """Whether the model decodes in MLA's absorbed form (a compressed latent per token)."""
        return self.decode_attention_dim > 0

    @property
    def decode_width(self) -> int:
        return self.decode_attention_dim or self.attention_dim

    @property
    def format_bytes(self) -> float:
        return FORMAT_BYTES.get(self.weights_format, 2.0)

    @property
    def expert_bytes(self) -> float:
        return self.expert_params * self.format_bytes

    @property
    def dense_bytes(self) -> float:
        """Bytes of everything but the routed experts."""
        return max(0.0, self.params_total - self.expert_params) * self._dense_format_bytes

    @property
    def _dense_format_bytes(self) -> float:
        return 2.0 if self.weights_format in EXPERTS_ONLY_FORMATS else self.format_bytes

    @property
    def streamed_dense_bytes(self) -> float:
        """The dense bytes a step streams: all but the routed experts, an untied input embedding
        (``embedding_params``) and ``unread_params``, priced as ``dense_bytes`` priced them."""
        return max(0.0, self.dense_bytes - (self.embedding_params + self.unread_params) * self._dense_format_bytes)

    @property
    def weight_bytes(self) -> float:
        """Bytes of all the checkpoint's weights (dense and routed experts)."""
        return self.dense_bytes + self.expert_bytes

    @property
    def compute_format(self) -> str:
        return COMPUTE_FORMAT.get(self.weights_format, "bf16")


def untied_embedding_params(vocab: int, hidden: int, tied: bool) -> float:
    """``ModelShape.embedding_params``: the input table's ``vocab x hidden`` when the head is untied."""
    return 0.0 if tied or vocab <= 0 else float(vocab) * hidden


def mla_decode_width(kv_lora_rank: int, qk_rope: int) -> int:
    """The width one MLA head attends at in the absorbed form (``ModelShape.decode_attention_dim``)."""
    return 2 * kv_lora_rank + qk_rope


def mla_widths(kv_lora_rank: int, qk_nope: int, qk_rope: int, v_head_dim: int) -> tuple[int, int]:
    """(prefill, decode) attention width of one MLA head (``ModelShape.attention_dim`` and
    ``decode_attention_dim``)."""
    return qk_nope + qk_rope + v_head_dim, mla_decode_width(kv_lora_rank, qk_rope)


def expert_params(layers: int, hidden: int, experts: int, expert_intermediate: int, dense_layers: int = 0,
                  matrices: int = 3) -> float:
    """Parameters of the routed experts of every MoE layer (``matrices`` per expert: gate, up and
    down; 2 for an ungated MLP)."""
    return float(max(0, layers - dense_layers) * experts * matrices * hidden * expert_intermediate)


def touched_fraction(tokens: float, experts: int, per_token: int) -> float:
    """Expected share of a layer's experts that ``tokens`` tokens route to, each picking
    ``per_token`` of ``experts`` uniformly: 1 - (1 - k/E)^tokens (an assumption: real routers
    are not uniform, which leaves fewer experts touched)."""
    if experts <= 0 or per_token <= 0:
        return 1.0
    return 1.0 - (1.0 - min(1.0, per_token / experts)) ** max(0.0, tokens)

