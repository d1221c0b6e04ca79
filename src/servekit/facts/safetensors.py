"""Exact weight bytes from safetensors headers, without loading a tensor.

A safetensors file starts with an 8-byte little-endian header length and a JSON header that
maps tensor names to dtype, shape and byte offsets; summing ``end - start`` gives the bytes each
tensor occupies. Vision-tower and MTP tensors are counted apart so a plan can drop them
(``--language-model-only``; no speculative decoding).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable
from pathlib import Path

from servekit.errors import ServekitError
from servekit.facts.model import WeightBytes

MAX_HEADER_BYTES = 100 * 1024 * 1024
INDEX_NAME = "model.safetensors.index.json"

_VISION_MARKERS = (
    "visual.",
    "vision_tower",
    "vision_model",
    "vision_encoder",
    "multi_modal_projector",
    "mm_projector",
    "image_newline",
    "vision_embed",
)
_LAYER_INDEX = re.compile(r"(?:^|\.)layers\.(\d+)\.")


class SafetensorsError(ServekitError):
    """A safetensors file or index cannot be read."""


def read_header(path: Path) -> dict[str, dict]:
    """The JSON header of one safetensors file (tensor name -> dtype/shape/data_offsets)."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(8)
            if len(raw) != 8:
                raise SafetensorsError(f"{path}: shorter than a safetensors header")
            (length,) = struct.unpack("<Q", raw)
            if length <= 0 or length > MAX_HEADER_BYTES:
                raise SafetensorsError(f"{path}: implausible safetensors header length {length}")
            text = fh.read(length)
    except OSError as exc:
        raise SafetensorsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorsError(f"{path}: safetensors header is not JSON ({exc})") from None
    header.pop("__metadata__", None)
    return header


def tensor_part(name: str, num_layers: int | None) -> str:
    """Which part of the model a tensor belongs to: "vision", "mtp" or "language"."""
    if any(marker in name for marker in _VISION_MARKERS):
        return "vision"
    if name.startswith("mtp.") or ".mtp." in name or name.startswith("model.mtp"):
        return "mtp"
    match = _LAYER_INDEX.search(name)
    if match and num_layers is not None and int(match.group(1)) >= num_layers and "vision" not in name:
        return "mtp"
    return "language"


def weight_bytes_from_headers(headers: Iterable[dict[str, dict]], num_layers: int | None) -> WeightBytes:
    totals = {"vision": 0, "mtp": 0, "language": 0}
    for header in headers:
        for name, info in header.items():
            start, end = info.get("data_offsets", (0, 0))
            totals[tensor_part(name, num_layers)] += int(end) - int(start)
    return WeightBytes(
        total=sum(totals.values()), vision=totals["vision"], mtp=totals["mtp"], exact=True
    )


def checkpoint_weight_bytes(folder: Path, num_layers: int | None) -> WeightBytes | None:
    """Weight bytes of the checkpoint in ``folder``: headers when the shards are present,
    else the index's ``total_size``; None when there is no safetensors at all."""
    index_path = folder / INDEX_NAME
    shards: list[Path]
    index_total: int | None = None
    if index_path.is_file():
        try:
            index = json.loads(index_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SafetensorsError(f"{index_path}: cannot read the index ({exc})") from None
        shards = [folder / name for name in sorted(set(index.get("weight_map", {}).values()))]
        index_total = (index.get("metadata") or {}).get("total_size")
    else:
        shards = sorted(folder.glob("*.safetensors"))
    present = [p for p in shards if p.is_file()]
    if shards and len(present) == len(shards):
        return weight_bytes_from_headers((read_header(p) for p in present), num_layers)
    if index_total:
        return WeightBytes(total=int(index_total), exact=True)
    return None
