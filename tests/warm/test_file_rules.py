"""Which files of a repo the engine loads."""

from __future__ import annotations

import pytest

from servekit.warm.file_rules import (
    RepoLayoutError,
    literal_pattern,
    patterns_for,
    restrict_to_index,
    select_from_listing,
)

REPO = [
    ".gitattributes",
    "README.md",
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "preprocessor_config.json",
    "tokenizer.model",
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
    "model.safetensors.index.json",
    "consolidated.safetensors",
    "pytorch_model-00001-of-00002.bin",
    "pytorch_model.bin.index.json",
    "original/consolidated.00.pth",
    "original/params.json",
    "onnx/model.onnx",
    "model-q4_0.gguf",
    "flax_model.msgpack",
]


def test_safetensors_repo_skips_every_other_format_and_subfolder():
    sel = select_from_listing(REPO, "model")
    assert sel.weight_format == "safetensors"
    assert sel.index == "model.safetensors.index.json"
    assert set(sel.files) == {
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "preprocessor_config.json",
        "tokenizer.model",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "consolidated.safetensors",
        "model.safetensors.index.json",
    }
    assert "pytorch_model.bin.index.json" in sel.skipped and "original/params.json" in sel.skipped


def test_index_restricts_to_the_shards_it_names():
    sel = select_from_listing(REPO, "model")
    weight_map = {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}
    narrowed = restrict_to_index(sel, weight_map, REPO)
    assert "consolidated.safetensors" not in narrowed.files
    assert narrowed.weights == ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")


def test_index_naming_an_absent_shard_is_a_layout_error():
    sel = select_from_listing(REPO, "model")
    with pytest.raises(RepoLayoutError, match="model-00003-of-00003.safetensors"):
        restrict_to_index(sel, {"a": "model-00003-of-00003.safetensors"}, REPO)


def test_bin_weights_when_the_repo_has_no_safetensors():
    listing = ["config.json", "pytorch_model.bin", "tokenizer.json", "original/x.pth"]
    sel = select_from_listing(listing, "model")
    assert sel.weight_format == "pt" and set(sel.files) == {"config.json", "pytorch_model.bin", "tokenizer.json"}


def test_tokenizer_repo_fetches_no_weights():
    sel = select_from_listing(REPO, "tokenizer")
    assert not sel.weights and not any(f.endswith((".safetensors", ".bin")) for f in sel.files)
    assert "tokenizer.json" in sel.files


def test_gguf_encoding_picks_the_matching_file():
    listing = ["config.json", "m-q4_k_m.gguf", "m-q6_k.gguf", "tokenizer.json"]
    assert select_from_listing(listing, "model", "gguf:q6_k").weights == ("m-q6_k.gguf",)


def test_repo_without_weights_is_reported():
    with pytest.raises(RepoLayoutError, match="no safetensors weights"):
        select_from_listing(["config.json", "README.md"], "model")


def test_offline_patterns_keep_to_the_root():
    from huggingface_hub.utils import filter_repo_objects

    sel = patterns_for("model")
    kept = set(
        filter_repo_objects(REPO, allow_patterns=list(sel.allow_patterns), ignore_patterns=list(sel.ignore_patterns))
    )
    assert "original/params.json" not in kept and "onnx/model.onnx" not in kept
    assert "pytorch_model-00001-of-00002.bin" not in kept and "model-00001-of-00002.safetensors" in kept


def test_literal_pattern_matches_only_its_path():
    from fnmatch import fnmatch

    assert fnmatch("a[1]*?.json", literal_pattern("a[1]*?.json"))
    assert not fnmatch("a1xy.json", literal_pattern("a[1]*?.json"))
