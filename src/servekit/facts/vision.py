"""The vision tower of a multimodal config.json (its ``vision_config``) as ``VisionFacts``.

Families name the same sizes differently:

* width: ``embed_dim`` (Qwen2-VL, where ``hidden_size`` is then the output width), else
  ``hidden_size`` / ``width`` / ``hidden_dim``;
* MLP width: ``intermediate_size``, else ``mlp_ratio`` x width, else 4 x width;
* depth: ``depth`` / ``num_hidden_layers`` / ``num_layers``;
* patches merged into one output token per side: ``spatial_merge_size`` (in the vision config or at
  the top level, as Mistral 3 has it), else ``1 / pixel_shuffle_ratio`` or ``1 / downsample_ratio``;
* output width: ``out_hidden_size``, else the language model's hidden size;
* fixed-resolution towers state ``image_size``; a config may state ``mm_tokens_per_image``;
* a ``silu`` activation means a gated MLP (Qwen2.5-VL, Pixtral: gate, up and down projections);
  GELU towers (SigLIP, Qwen3-VL) have two.
"""

from __future__ import annotations

from typing import Any

from servekit.facts.model import VisionFacts

VISION_CONFIG_KEYS = ("vision_config", "visual", "vision_tower_config", "image_config")
GATED_ACTIVATIONS = ("silu", "swish", "swiglu")


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = cfg.get(key)
        if value is not None and not isinstance(value, bool):
            return value
    return None


def _side(value: Any) -> int | None:
    """An int, or the largest entry of a [height, width] pair."""
    if isinstance(value, list | tuple) and value:
        return max(int(v) for v in value)
    return int(value) if isinstance(value, int | float) else None


def _merge(vision: dict[str, Any], config: dict[str, Any]) -> int:
    merge = _first(vision, "spatial_merge_size") or _first(config, "spatial_merge_size")
    if merge:
        return int(merge)
    ratio = _first(vision, "pixel_shuffle_ratio", "downsample_ratio") or _first(config, "downsample_ratio")
    return max(1, round(1 / float(ratio))) if ratio else 1


def vision_config(config: dict[str, Any]) -> dict[str, Any] | None:
    for key in VISION_CONFIG_KEYS:
        if isinstance(config.get(key), dict):
            return config[key]
    return None


def vision_from_config(config: dict[str, Any]) -> VisionFacts | None:
    """The vision tower a (top-level) config describes, or None when it has no readable one."""
    vision = vision_config(config)
    if vision is None:
        return None
    width = _first(vision, "embed_dim", "hidden_size", "width", "hidden_dim")
    depth = _first(vision, "depth", "num_hidden_layers", "num_layers")
    if not isinstance(width, int | float) or not isinstance(depth, int | float):
        return None
    width = int(width)
    ratio = _first(vision, "mlp_ratio")
    intermediate = _first(vision, "intermediate_size") or (ratio * width if ratio else 4 * width)
    out = _first(vision, "out_hidden_size") or (vision.get("hidden_size") if "embed_dim" in vision else None)
    tokens = _first(config, "mm_tokens_per_image")
    return VisionFacts(
        width=width,
        intermediate=int(intermediate),
        depth=int(depth),
        patch_size=_side(_first(vision, "patch_size")) or 14,
        in_channels=int(_first(vision, "in_channels", "num_channels", "in_chans") or 3),
        temporal_patch_size=int(_first(vision, "temporal_patch_size") or 1),
        merge=_merge(vision, config),
        out_width=int(out) if out else None,
        deepstack_levels=len(vision.get("deepstack_visual_indexes") or ()),
        image_size=_side(_first(vision, "image_size")),
        tokens_per_image=int(tokens) if tokens else None,
        gated_mlp=str(vision.get("hidden_act") or vision.get("hidden_activation") or "").lower() in GATED_ACTIVATIONS,
    )


def vision_params(vision: VisionFacts, lm_hidden: int) -> int:
    """Parameters of the tower: per block the attention (4 x width^2) and the MLP (2 or, gated, 3
    x width x intermediate), the patch embedding, and the merger's two layers into the language
    model."""
    merged = vision.width * vision.merge * vision.merge
    out = vision.out_width or lm_hidden
    mlp = (3 if vision.gated_mlp else 2) * vision.width * vision.intermediate
    blocks = vision.depth * (4 * vision.width * vision.width + mlp)
    merger = vision.width * out
    if vision.merge > 1:
        merger = (merged * merged + merged * out) * (1 + vision.deepstack_levels)
    return blocks + vision.pixels_per_patch * vision.width + merger
