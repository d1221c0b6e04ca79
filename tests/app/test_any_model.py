"""Plans for models no recipe names, from config.json (and safetensors headers) alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testing.model_configs import CONFIGS, DENSE_GQA, MLA, MOE, catalog_with_hardware, dense_tensors
from testing.model_configs import write_config_dir, write_header_only

from servekit.app.generic_rules import (
    Architecture,
    planned_context,
    quantization_note,
    remote_code_reason,
    tp_candidates,
)
from servekit.app.model_ref import hub_url_parts, model_ref
from servekit.cli.app import main
from servekit.engines.vllm.architectures import supported_architectures
from servekit.errors import SelectionError
from servekit.facts.config import facts_from_config
from servekit.facts.estimate import estimated_weight_bytes, linear_weight_bytes

GIB = 1 << 30


@pytest.fixture(scope="module")
def l40s_catalog(tmp_path_factory) -> list[str]:
    """``--catalog DIR`` when the bundled catalog lacks an l40s profile, else nothing."""
    copy = catalog_with_hardware(tmp_path_factory.mktemp("catalog"))
    return ["--catalog", copy] if copy else []


def _plan_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["plan", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


# -- rules -------------------------------------------------------------------------------------

def test_the_pinned_vllm_architecture_list_is_vllms_own():
    table = supported_architectures()
    assert table.version == "0.32.0" and len(table.kinds) > 300
    assert table.kind_of("LlamaForCausalLM") == "text_generation"
    assert table.generative("Qwen2_5_VLForConditionalGeneration")
    assert not table.supports("NoSuchModelForCausalLM")


def test_remote_code_is_trusted_for_auto_map_or_an_architecture_vllm_lacks():
    assert "auto_map" in remote_code_reason(MLA, Architecture("DeepseekV2ForCausalLM", "text_generation"))
    assert "not implemented" in remote_code_reason({}, Architecture("MyOwnForCausalLM", None))
    assert remote_code_reason(DENSE_GQA, Architecture("LlamaForCausalLM", "text_generation")) is None


def test_quantization_is_left_to_vllm_unless_it_does_not_know_the_method():
    known = ("fp8", "awq", "compressed-tensors")
    assert quantization_note(None, known, "0.32.0") is None
    note, ok = quantization_note("fp8", known, "0.32.0")
    assert ok and "no --quantization" in note
    note, ok = quantization_note("fp9", known, "0.32.0")
    assert not ok and "refuse" in note


def test_tensor_parallel_sizes_divide_heads_and_kv_heads():
    dense = facts_from_config(DENSE_GQA)
    assert tp_candidates(dense, 8) == [1, 2, 4, 8]
    odd = facts_from_config({**DENSE_GQA, "num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128})
    assert tp_candidates(odd, 8) == [1, 2, 4, 8]  # 3 and 6 divide 24 heads but not 8 KV heads
    mla = facts_from_config(MLA)
    assert tp_candidates(mla, 8) == [1, 2, 4, 8]
    assert tp_candidates(facts_from_config({**DENSE_GQA, "num_attention_heads": 40, "num_key_value_heads": 40,
                                            "head_dim": 128}), 8) == [1, 2, 4, 5, 8]


def test_the_planned_context_is_the_limit_or_the_longest_fit_in_whole_steps():
    assert planned_context(200_000, 131072) == 131072
    assert planned_context(50_123, 131072) == 49152
    assert planned_context(900, 131072) == 900


def test_weights_are_estimated_from_the_config_near_the_real_checkpoints():
    # Llama-3.1-8B: 16.06 GB; Qwen3-30B-A3B: 61.1 GB; DeepSeek-V2-Lite: 31.4 GB (safetensors totals)
    for config, real_bytes in ((DENSE_GQA, 16.06e9), (MOE, 61.1e9), (MLA, 31.4e9)):
        estimate = estimated_weight_bytes(config, facts_from_config(config))
        assert not estimate.exact and estimate.basis == "estimated from config.json"
        assert abs(estimate.total - real_bytes) / real_bytes < 0.05


def test_quantized_linear_layers_are_priced_by_their_bits():
    assert linear_weight_bytes({"quantization_config": {"quant_method": "fp8"}}, 2.0) == 1.0
    assert linear_weight_bytes({"quantization_config": {"quant_method": "awq", "bits": 4}}, 2.0) < 0.6
    assert linear_weight_bytes({}, 2.0) == 2.0


def test_model_arguments_name_a_directory_a_hub_id_or_a_hub_url(tmp_path: Path):
    assert hub_url_parts("https://huggingface.co/Qwen/Qwen3-8B") == ("Qwen/Qwen3-8B", None)
    assert hub_url_parts("https://huggingface.co/Qwen/Qwen3-8B/tree/v1.0") == ("Qwen/Qwen3-8B", "v1.0")
    assert hub_url_parts("https://huggingface.co/Qwen/Qwen3-8B/tree/main") == ("Qwen/Qwen3-8B", None)
    assert hub_url_parts("https://example.com/Qwen/Qwen3-8B") is None
    with pytest.raises(SelectionError, match="not a Hugging Face model URL"):
        hub_url_parts("https://huggingface.co/datasets/a/b")
    folder = write_config_dir(tmp_path / "m", DENSE_GQA)
    local = model_ref(str(folder / "config.json"))
    assert local.kind == "dir" and local.serve_name == str(folder.resolve())
    assert model_ref("org/name").repo_id == "org/name"
    with pytest.raises(SelectionError, match="not a recipe id"):
        model_ref("no-such-thing")


# -- plans -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_config_only_directory_gets_a_checked_plan(capsys, tmp_path, l40s_catalog, name):
    config = CONFIGS[name]
    folder = write_config_dir(tmp_path / name, config)
    code, doc = _plan_json(capsys, str(folder), "--hardware", "l40s", *l40s_catalog)
    assert code == 0
    argv = doc["argv"]
    assert argv[:3] == ["vllm", "serve", str(folder.resolve())] and doc["command"].startswith("vllm serve ")
    tp = int(argv[argv.index("--tensor-parallel-size") + 1]) if "--tensor-parallel-size" in argv else 1
    assert config["num_attention_heads"] % tp == 0
    assert "--max-model-len" in argv and doc["docker_image"] and doc["hardware"] == "l40s"
    fit = doc["servekit"]["checks"]["fit"][0]
    assert fit["ok"] is True and fit["report"]["tp"] == tp
    assert any(f["code"] == "fit-estimated-weights" for f in fit["findings"])
    sources = [a["source"] for a in doc["servekit"]["provenance"]["serve"]["args"]]
    assert all("config.json" in s for s in sources)
    assert any("no recipe names this model" in n for n in doc["servekit"]["notes"])
    assert ("--trust-remote-code" in argv) == (name == "mla")


def test_the_smallest_tensor_parallel_size_that_fits_is_chosen(capsys, tmp_path, l40s_catalog):
    folder = write_config_dir(tmp_path / "moe", MOE)
    code, doc = _plan_json(capsys, str(folder), "--hardware", "rtx_4090_2x")
    # ~57 GiB of weights on two 24 GB cards: no divisor fits, and the verdict says so
    assert code == 1 and doc["servekit"]["checks"]["fit"][0]["ok"] is False
    code, doc = _plan_json(capsys, str(folder), "--hardware", "h100")
    assert code == 0 and "--tensor-parallel-size" not in doc["argv"]
    assert doc["argv"][-2:] == ["--max-model-len", MOE["max_position_embeddings"]]


def test_safetensors_headers_make_the_weights_exact(capsys, tmp_path):
    folder = write_config_dir(tmp_path / "dense", DENSE_GQA)
    total = write_header_only(folder / "model.safetensors", dense_tensors(DENSE_GQA))
    code, doc = _plan_json(capsys, str(folder), "--hardware", "h100")
    assert code == 0
    fit = doc["servekit"]["checks"]["fit"][0]
    assert not any(f["code"].startswith("fit-estimated") for f in fit["findings"])
    assert doc["servekit"]["checks"]["facts"]["weights_bytes"] == total
    assert doc["servekit"]["checks"]["facts"]["weights_exact"] is True
    assert abs(fit["report"]["weights_gib_per_rank"] - total / GIB) < 0.01


def test_a_text_plan_and_the_recipe_only_options(capsys, tmp_path):
    folder = write_config_dir(tmp_path / "dense", DENSE_GQA)
    assert main(["plan", str(folder), "--hardware", "h100"]) == 0
    out = capsys.readouterr().out
    assert f"vllm serve {folder.resolve()}" in out and "fit (serve): fits" in out
    assert main(["plan", str(folder), "--feature", "spec_decoding"]) == 1
    assert "--feature chooses among a recipe's settings" in capsys.readouterr().err
    assert main(["plan", str(folder)]) == 0
    assert "hardware: h100 (the default" in capsys.readouterr().out


def test_an_unknown_name_is_still_the_catalogs_unknown_recipe(capsys):
    assert main(["plan", "Qwen3.8-27B-typo"]) == 1
    assert "unknown recipe" in capsys.readouterr().err


def test_an_architecture_vllm_lacks_needs_its_own_code(capsys, tmp_path):
    folder = write_config_dir(tmp_path / "own", {**DENSE_GQA, "architectures": ["MyOwnForCausalLM"]})
    code, doc = _plan_json(capsys, str(folder), "--hardware", "h100")
    assert code == 0 and "--trust-remote-code" in doc["argv"]
    assert any("not implemented in vLLM 0.32.0" in n for n in doc["servekit"]["notes"])
