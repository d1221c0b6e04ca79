"""Exact weight bytes from safetensors headers; local dirs and the Hugging Face cache layout."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from servekit.facts.locate import FactsNotFoundError, cached_snapshot_dir, facts_from_dir, facts_from_path_or_cache
from servekit.facts.safetensors import SafetensorsError, checkpoint_weight_bytes, read_header, tensor_part
from testing.tiny_model import TinyLlamaShape, write_safetensors, write_tiny_llama


def _zeros(count: int, width: int) -> bytes:
    return bytes(count * width)


def test_header_is_read_without_loading_tensors(tmp_path: Path):
    path = tmp_path / "w.safetensors"
    write_safetensors(path, {"a.weight": ("BF16", [4, 8], _zeros(32, 2)), "b.bias": ("F32", [8], _zeros(8, 4))})
    header = read_header(path)
    assert set(header) == {"a.weight", "b.bias"}
    assert header["a.weight"]["shape"] == [4, 8]


def test_vision_and_mtp_tensors_are_counted_apart(tmp_path: Path):
    write_safetensors(tmp_path / "model.safetensors", {
        "model.language_model.layers.0.mlp.up_proj.weight": ("BF16", [16, 16], _zeros(256, 2)),
        "model.visual.blocks.0.attn.qkv.weight": ("BF16", [8, 8], _zeros(64, 2)),
        "mtp.layers.0.mlp.up_proj.weight": ("BF16", [4, 4], _zeros(16, 2)),
        "model.layers.2.self_attn.q_proj.weight": ("BF16", [2, 2], _zeros(4, 2)),
    })
    weights = checkpoint_weight_bytes(tmp_path, num_layers=2)
    assert weights.total == (256 + 64 + 16 + 4) * 2
    assert weights.vision == 128 and weights.mtp == (16 + 4) * 2
    assert weights.language == 512 and weights.exact


@pytest.mark.parametrize("shards", [1, 3])
def test_sharded_and_single_checkpoints_sum_to_the_same_bytes(tmp_path: Path, shards: int):
    shape = TinyLlamaShape(layers=2, hidden=64, heads=2, kv_heads=1, head_dim=32, intermediate=128)
    write_tiny_llama(tmp_path, shape=shape, dtype="bfloat16", shards=shards)
    facts = facts_from_dir(tmp_path)
    h, v, i = shape.hidden, shape.vocab, shape.intermediate
    per_layer = h * h * 2 + 2 * h * shape.kv_heads * shape.head_dim + 3 * h * i + 2 * h
    expected = (2 * v * h + h + shape.layers * per_layer) * 2
    assert facts.weights.total == expected
    assert facts.num_layers == 2 and facts.head_dim == 32


def test_index_without_shards_falls_back_to_total_size(tmp_path: Path):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 1234}, "weight_map": {"x": "model-00001-of-00002.safetensors"}}))
    assert checkpoint_weight_bytes(tmp_path, 2).total == 1234


def test_a_corrupt_header_is_a_clear_error(tmp_path: Path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 10) + b"not json!!")
    with pytest.raises(SafetensorsError, match="not JSON"):
        read_header(bad)


def test_tensor_part_rules():
    assert tensor_part("vision_tower.encoder.layers.0.w", 4) == "vision"
    assert tensor_part("model.layers.61.eh_proj.weight", 61) == "mtp"
    assert tensor_part("model.layers.60.mlp.weight", 61) == "language"


def _fake_cache(root: Path, repo: str, config: dict) -> Path:
    folder = root / ("models--" + repo.replace("/", "--"))
    commit = "0123456789abcdef0123456789abcdef01234567"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(commit)
    snapshot = folder / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(config))
    return snapshot


def test_the_hugging_face_cache_is_found_offline(tmp_path: Path):
    cfg = {"num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 512}
    snapshot = _fake_cache(tmp_path, "org/tiny", cfg)
    assert cached_snapshot_dir("org/tiny", cache_dir=tmp_path) == snapshot
    facts = facts_from_path_or_cache("org/tiny", cache_dir=tmp_path)
    assert facts.model_id == "org/tiny" and facts.head_dim == 64 and facts.weights is None


def test_a_config_path_and_a_missing_model(tmp_path: Path):
    write_tiny_llama(tmp_path / "m", dtype="float32")
    assert facts_from_path_or_cache(str(tmp_path / "m" / "config.json")).dtype == "float32"
    with pytest.raises(FactsNotFoundError, match="no model facts"):
        facts_from_path_or_cache("nobody/nothing", cache_dir=tmp_path)
