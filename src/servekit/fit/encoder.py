"""The multimodal encoder's share of vLLM's start-up profile (``gpu_model_runner.profile_run``).

Before the language model's dummy pass, vLLM runs the vision tower over a dummy batch of the
modality with the most tokens per item and keeps the outputs in the encoder cache until the
profile ends:

* tokens per item: the largest image the processor makes. Fixed-resolution towers state
  ``image_size`` (``(image_size / patch)^2`` patches, ``merge^2`` of them per token, or the config's
  ``mm_tokens_per_image``); towers that take any size (Qwen-VL style) go up to the processor's
  pixel budget, which config.json does not state (``vision_max_item_tokens``).
* items: ``vllm/multimodal/encoder_budget.py`` ``MultiModalBudget._get_max_items``: the encoder
  budget (``vllm/v1/core/encoder_cache_manager.py`` ``compute_mm_encoder_budget``: the larger of
  ``max_num_batched_tokens`` and one item) over the tokens per item, at most ``max_num_seqs`` x
  items per prompt (999 by default, at most ``max_model_len / tokens``), at least one.
* the tower's own peak (``transient``): per patch, the pixel values of the batch, and inside the
  widest block's MLP the position embeddings, the residual stream and the normed input
  (``encoder_hidden_rows`` x width) with the MLP's output and its activation
  (``encoder_intermediate_rows`` x intermediate / TP; a gated MLP's fused gate-up output is one
  row more): ``Qwen3_VisionTransformer.forward``, ``Qwen3_VisionBlock.forward``,
  ``Qwen3_VisionMLP.forward`` in ``vllm/model_executor/models/qwen3_vl.py``; ``Qwen2_5_VisionMLP``
  in ``qwen2_5_vl.py`` (``act_fn(gate_up_proj(x))``).
* kept while the language model's dummy pass and the sampler run (``kept``): the output embeddings
  (``out_width`` x (1 + deepstack levels) per token) in ``encoder_cache`` and the dummy batch's
  pixel values, which ``profile_run`` still holds.

A model whose facts say it has vision but carry no tower shape is planned with the fallback tower
of the constants table (``default_vision_*``).
"""

from __future__ import annotations

from dataclasses import dataclass

from servekit.facts.model import ModelFacts, VisionFacts
from servekit.fit.constants import value

GIB = 1 << 30
DEFAULT_MM_LIMIT = 999
"""Items of a modality per prompt when ``--limit-mm-per-prompt`` does not say
(``vllm/config/multimodal.py`` ``get_limit_per_prompt``)."""


@dataclass(frozen=True)
class EncoderProfile:
    items: int
    tokens_per_item: int
    patches_per_item: int
    transient_gib: float
    """The tower's own peak over the dummy batch."""
    kept_gib: float
    """Held while the language model's dummy pass and the sampler run."""


def fallback_tower() -> VisionFacts:
    """The tower assumed for a multimodal model whose facts do not describe one."""
    return VisionFacts(
        width=int(value("default_vision_width")),
        intermediate=int(value("default_vision_intermediate")),
        depth=int(value("default_vision_depth")),
        patch_size=int(value("default_vision_patch")),
        temporal_patch_size=int(value("default_vision_temporal_patch")),
        merge=int(value("default_vision_merge")),
    )


def tower(facts: ModelFacts) -> VisionFacts | None:
    """The vision tower of the model (its own, or the fallback), None for text-only models."""
    if facts.vision is not None:
        return facts.vision
    return fallback_tower() if facts.has_vision else None


def item_shape(vision: VisionFacts) -> tuple[int, int]:
    """(output tokens, patches) of the largest item the processor makes."""
    per_token = vision.merge * vision.merge
    if vision.image_size:
        patches = (vision.image_size // vision.patch_size) ** 2
        return vision.tokens_per_image or max(1, patches // per_token), patches
    tokens = vision.tokens_per_image or int(value("vision_max_item_tokens"))
    return tokens, tokens * per_token


def items_per_batch(tokens: int, batched: int, max_num_seqs: int, max_model_len: int) -> int:
    """How many maximal items the dummy encoder batch holds."""
    budget = max(batched, tokens)
    per_prompt = max(1, min(DEFAULT_MM_LIMIT, max_model_len // tokens))
    return max(1, min(budget // tokens, max_num_seqs * per_prompt))


def encoder_profile(
    vision: VisionFacts, lm_hidden: int, act_bytes: float, tp: int, batched: int, max_num_seqs: int,
    max_model_len: int,
) -> EncoderProfile:
    tokens, patches = item_shape(vision)
    items = items_per_batch(tokens, batched, max_num_seqs, max_model_len)
    pixels = vision.pixels_per_patch
    mlp_rows = value("encoder_intermediate_rows") + (1.0 if vision.gated_mlp else 0.0)
    block = value("encoder_hidden_rows") * vision.width + mlp_rows * vision.intermediate / tp
    transient = items * patches * (pixels + block) * act_bytes
    outputs = tokens * (vision.out_width or lm_hidden) * (1 + vision.deepstack_levels)
    kept = items * (outputs + patches * pixels) * act_bytes
    return EncoderProfile(items, tokens, patches, transient / GIB, kept / GIB)
