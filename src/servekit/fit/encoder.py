"""The multimodal encoder's share of vLLM's start-up profile (``gpu_model_runner.profile_run``).

Before the language model's dummy pass, vLLM runs the vision tower over a dummy batch of the
modality with the most tokens per item and keeps the outputs in the encoder cache until the
profile ends:

* tokens per item: the largest image the processor makes. Fixed-resolution towers state
  ``image_size`` (``(image_size / patch)^2`` patches, ``merge^2`` of them per token, or the config's
  ``mm_tokens_per_image``); towers that take any size (Qwen-VL style) go up to the processor's
  pixel budget, which config.json does not state (``vision_max_item_tokens``).
* modality: towers of the Qwen-VL shape (any image size, ``temporal_patch_size`` > 1) also take
  video (``Qwen2VLProcessingInfo.get_supported_mm_limits``: image and video). The profile runs the
  modality with the most tokens per item, a tie going to the name that sorts last, so video
  (``MultiModalBudget.get_modality_with_max_tokens``: ``max(..., key=(tokens, modality))``). A
  video's tokens (``get_max_video_tokens``) are those of its frames at the largest image size,
  one grid step per ``temporal_patch_size`` frames (the count padded to it); its frames are the
  most that fit ``max_model_len`` (``_get_max_video_frames``, counting up from one frame, from two
  for Qwen3-VL towers) shared by the prompt's video limit, at most ``_MAX_FRAMES_PER_VIDEO``
  (14 in ``qwen2_vl.py``, 24576 in ``qwen3_vl.py``), at least one
  (``get_num_frames_with_most_features``); the Qwen3-VL dummy video has at least two frames
  (``Qwen3VLDummyInputsBuilder._get_dummy_videos``). So the default limit of 999 videos leaves a
  video the size of one image, while ``--limit-mm-per-prompt '{"video": 1}'`` makes one video
  fill the context. A modality whose limit is 0 is not profiled.
* items: ``vllm/multimodal/encoder_budget.py`` ``MultiModalBudget._get_max_items``: the encoder
  budget (``vllm/v1/core/encoder_cache_manager.py`` ``compute_mm_encoder_budget``: the larger of
  ``max_num_batched_tokens`` and the largest item of any profiled modality) over the tokens per
  item, at most ``max_num_seqs`` x items per prompt (the modality's limit, 999 by default, at
  most ``max_model_len / tokens``), at least one.
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

from servekit.facts.model import ModelFacts, VisionFacts
from servekit.fit.constants import value
from servekit.records import record

GIB = 1 << 30
DEFAULT_MM_LIMIT = 999
"""Items of a modality per prompt when ``--limit-mm-per-prompt`` does not say
(``vllm/config/multimodal.py`` ``get_limit_per_prompt``)."""


QWEN2_VL_MAX_FRAMES = 14
"""``_MAX_FRAMES_PER_VIDEO`` of ``vllm/model_executor/models/qwen2_vl.py`` (Qwen2-VL, Qwen2.5-VL)."""
QWEN3_VL_MAX_FRAMES = 24576
"""``_MAX_FRAMES_PER_VIDEO`` of ``vllm/model_executor/models/qwen3_vl.py`` ('Official recommended max
pixels is 24576 * 32 * 32')."""


@record
class EncoderProfile:
    """The multimodal encoder's start-up profile: the items it runs and the memory they take."""

    items: int
    tokens_per_item: int
    patches_per_item: int
    transient_gib: float
    """The tower's own peak over the dummy batch."""
    kept_gib: float
    """Held while the language model's dummy pass and the sampler run."""
    modality: str = "image"
    """The modality profiled (the one with the most tokens per item)."""
    budget_tokens: int = 0
    """The encoder budget vLLM logs ('Encoder cache will be initialized with a budget of N tokens')."""


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


def takes_video(vision: VisionFacts) -> bool:
    """Whether the tower also profiles video: the Qwen-VL shape (any image size, frames folded in
    ``temporal_patch_size`` steps)."""
    return vision.image_size is None and vision.temporal_patch_size > 1


def _grid_t(frames: int, temporal: int) -> int:
    """Grid steps of ``frames`` frames (padded to the temporal patch: ``_get_vision_info``)."""
    return max((frames + frames % temporal) // temporal, 1)


def video_frames(vision: VisionFacts, max_model_len: int, video_limit: int) -> int:
    """Frames of the largest dummy video (``get_num_frames_with_most_features``)."""
    image_tokens, _ = item_shape(vision)
    qwen3 = vision.deepstack_levels > 0
    total = 2 if qwen3 else 1
    while _grid_t(total + 1, vision.temporal_patch_size) * image_tokens <= max_model_len:
        total += 1
    cap = QWEN3_VL_MAX_FRAMES if qwen3 else QWEN2_VL_MAX_FRAMES
    return max(min(total // max(video_limit, 1), cap), 1)


def modality_items(vision: VisionFacts, max_model_len: int, limits: dict[str, int]) -> dict[str, tuple[int, int]]:
    """``{modality: (tokens, patches)}`` of the largest item of each profiled modality."""
    tokens, patches = item_shape(vision)
    out = {}
    if limits.get("image", DEFAULT_MM_LIMIT) > 0:
        out["image"] = (tokens, patches)
    video_limit = limits.get("video", DEFAULT_MM_LIMIT)
    if takes_video(vision) and video_limit > 0:
        frames = video_frames(vision, max_model_len, video_limit)
        steps = _grid_t(frames, vision.temporal_patch_size)
        dummy = _grid_t(max(frames, 2), vision.temporal_patch_size) if vision.deepstack_levels > 0 else steps
        out["video"] = (steps * tokens, dummy * patches)
    return out


def items_per_batch(tokens: int, batched: int, max_num_seqs: int, max_model_len: int,
                    limit: int = DEFAULT_MM_LIMIT, budget: int | None = None) -> int:
    """How many maximal items the dummy encoder batch holds (``budget``: the encoder budget, by
    default the larger of ``batched`` and one item)."""
    budget = budget if budget is not None else max(batched, tokens)
    per_prompt = max(1, min(limit, max_model_len // tokens))
    return max(1, min(budget // tokens, max_num_seqs * per_prompt))


def encoder_profile(
    vision: VisionFacts, lm_hidden: int, act_bytes: float, tp: int, batched: int, max_num_seqs: int,
    max_model_len: int, limits: dict[str, int] | None = None,
) -> EncoderProfile | None:
    """The profile's encoder terms; None when every modality's limit is 0."""
    limits = limits or {}
    shapes = modality_items(vision, max_model_len, limits)
    if not shapes:
        return None
    modality = max(shapes, key=lambda m: (shapes[m][0], m))
    tokens, patches = shapes[modality]
    budget = max(batched, max(t for t, _ in shapes.values()))
    items = items_per_batch(tokens, batched, max_num_seqs, max_model_len,
                            limits.get(modality, DEFAULT_MM_LIMIT), budget)
    pixels = vision.pixels_per_patch
    mlp_rows = value("encoder_intermediate_rows") + (1.0 if vision.gated_mlp else 0.0)
    block = value("encoder_hidden_rows") * vision.width + mlp_rows * vision.intermediate / tp
    transient = items * patches * (pixels + block) * act_bytes
    outputs = tokens * (vision.out_width or lm_hidden) * (1 + vision.deepstack_levels)
    kept = items * (outputs + patches * pixels) * act_bytes
    return EncoderProfile(items, tokens, patches, transient / GIB, kept / GIB, modality, budget)
