"""Which repos a launch command loads, read from the argv."""

from __future__ import annotations

import json

import pytest

from servekit.warm.artifacts import ArtifactError, artifacts_from_argv


def _ids(arts):
    return [(a.repo_id, a.role, a.source) for a in arts]


def test_model_is_the_positional_after_serve_and_drafts_come_from_speculative_config():
    spec = json.dumps({"method": "dflash", "model": "incoai/Qwen3.8-27B-DFlash2", "num_speculative_tokens": 7})
    argv = ["vllm", "serve", "Qwen/Qwen3.8-27B", "--tensor-parallel-size", "1", "--speculative-config", spec]
    assert _ids(artifacts_from_argv(argv)) == [
        ("Qwen/Qwen3.8-27B", "model", "model"),
        ("incoai/Qwen3.8-27B-DFlash2", "draft", "--speculative-config.model"),
    ]


def test_in_checkpoint_mtp_names_no_extra_repo():
    argv = ["vllm", "serve", "Qwen/Qwen3.8-27B", "--speculative-config", '{"method":"mtp","num_speculative_tokens":3}']
    assert _ids(artifacts_from_argv(argv)) == [("Qwen/Qwen3.8-27B", "model", "model")]


def test_model_flag_tokenizer_revision_and_lora_modules():
    argv = [
        "python",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model=org/base",
        "--revision",
        "abc",
        "--tokenizer",
        "org/tok",
        "--lora-modules",
        "sql=org/sql-lora",
        '{"name":"x","path":"org/x-lora"}',
    ]
    arts = artifacts_from_argv(argv)
    assert _ids(arts) == [
        ("org/base", "model", "model"),
        ("org/tok", "tokenizer", "--tokenizer"),
        ("org/sql-lora", "adapter", "--lora-modules"),
        ("org/x-lora", "adapter", "--lora-modules"),
    ]
    assert arts[0].revision == "abc"


def test_local_paths_are_marked_and_tokenizer_same_as_model_is_not_repeated(tmp_path):
    argv = ["vllm", "serve", str(tmp_path), "--tokenizer", str(tmp_path), "--load-format", "safetensors"]
    (art,) = artifacts_from_argv(argv)
    assert art.local and art.weight_format == "safetensors"


def test_max_argv_model_draft_and_gguf_encoding():
    argv = [
        "max",
        "serve",
        "--model-path",
        "org/m",
        "--quantization-encoding",
        "q4_k",
        "--draft-model-path",
        "org/d",
        "--draft-huggingface-model-revision",
        "v2",
    ]
    arts = artifacts_from_argv(argv, engine="max")
    assert [(a.repo_id, a.role, a.weight_format, a.revision) for a in arts] == [
        ("org/m", "model", "gguf:q4_k", "main"),
        ("org/d", "draft", "auto", "v2"),
    ]


def test_bad_speculative_json_is_a_clear_error():
    with pytest.raises(ArtifactError, match="not valid JSON"):
        artifacts_from_argv(["vllm", "serve", "org/m", "--speculative-config", "{method:mtp"])


def test_no_model_is_a_clear_error():
    with pytest.raises(ArtifactError, match="names no model"):
        artifacts_from_argv(["vllm", "serve", "--port", "8000"])


def test_dotted_speculative_config_form():
    argv = ["vllm", "serve", "org/m", "--speculative-config.method", "eagle3"]
    argv += ["--speculative_config.model", "org/eagle"]
    assert _ids(artifacts_from_argv(argv))[1] == ("org/eagle", "draft", "--speculative-config.model")
