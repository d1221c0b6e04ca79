"""SGLang as an engine package: translation from vLLM launches, lint from its extracted catalog,
its image, warm-cache artifacts and memory hooks."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main
from servekit.engines.common.artifacts import DRAFT, MODEL
from servekit.engines.common.translation import DialectContext
from servekit.engines.registry import engine_for_argv, get_engine
from servekit.engines.sglang.memory import default_mem_fraction_static

SGLANG = get_engine("sglang")


def _flags(argv):
    return {argv[i]: argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else None
            for i in range(len(argv)) if argv[i].startswith("--")}


def test_catalog_is_sglang_0523s_parser():
    catalog = SGLANG.flag_catalog()
    assert catalog.version == "0.5.23" and len(catalog.flags) == 531
    assert sum(1 for f in catalog.flags if f.choices) == 96
    assert "qwen3_coder" in catalog.registries["tool_call_parsers"] and "qwen3" in catalog.registries["reasoning_parsers"]


def test_translates_the_core_options():
    launch = SGLANG.translate([
        "vllm", "serve", "org/m", "--tensor-parallel-size", "4", "--gpu-memory-utilization", "0.85",
        "--max-model-len", "32768", "--max-num-seqs", "64", "--quantization", "fp8", "--kv-cache-dtype", "fp8",
        "--tool-call-parser", "deepseek_v3", "--enable-auto-tool-choice", "--reasoning-parser", "deepseek_r1",
        "--speculative-config", '{"method": "eagle3", "model": "org/draft", "num_speculative_tokens": 3}',
        "--seed", "7", "--swap-space", "4"], DialectContext())
    assert launch.argv[:5] == ("python", "-m", "sglang.launch_server", "--model-path", "org/m")
    flags = _flags(list(launch.argv))
    assert flags["--tp-size"] == "4" and flags["--mem-fraction-static"] == "0.85"
    assert flags["--context-length"] == "32768" and flags["--max-running-requests"] == "64"
    assert flags["--quantization"] == "fp8" and flags["--kv-cache-dtype"] == "fp8_e4m3"
    assert flags["--tool-call-parser"] == "deepseekv3" and flags["--reasoning-parser"] == "deepseek-r1"
    assert flags["--speculative-algorithm"] == "EAGLE3" and flags["--speculative-draft-model-path"] == "org/draft"
    assert flags["--speculative-num-draft-tokens"] == "4" and flags["--random-seed"] == "7"
    assert {u.flag for u in launch.untranslated} == {"--enable-auto-tool-choice", "--swap-space"}
    assert all(u.reason for u in launch.untranslated)
    assert launch.valid and launch.image == "lmsysorg/sglang:v0.5.23"
    assert [a.role for a in SGLANG.artifacts(list(launch.argv))] == [MODEL, DRAFT]


def test_parallel_multi_node_and_disaggregation():
    dp_ep = SGLANG.translate(["vllm", "serve", "m", "--data-parallel-size", "8", "--enable-expert-parallel"])
    flags = _flags(list(dp_ep.argv))
    assert (flags["--tp-size"], flags["--attn-dp-size"], flags["--ep-size"]) == ("8", "8", "8")
    nodes = SGLANG.translate(["vllm", "serve", "m", "-tp", "8", "--nnodes", "2", "--node-rank", "1",
                              "--master-addr", "10.0.0.1", "--master-port", "29500"])
    flags = _flags(list(nodes.argv))
    assert (flags["--nnodes"], flags["--node-rank"], flags["--dist-init-addr"]) == ("2", "1", "10.0.0.1:29500")
    prefill = SGLANG.translate(["vllm", "serve", "m", "--kv-transfer-config",
                                '{"kv_connector": "NixlConnector", "kv_role": "kv_producer"}'])
    flags = _flags(list(prefill.argv))
    assert flags["--disaggregation-mode"] == "prefill" and flags["--disaggregation-transfer-backend"] == "nixl"
    assert "sglang_router.launch_router" in SGLANG.plan_fields(prefill)["sglang_router_argv"]


def test_lint_recognizes_and_checks_sglang_commands():
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "2"]
    assert engine_for_argv(argv) is SGLANG and SGLANG.lint(argv).valid
    bad = SGLANG.lint(["python", "-m", "sglang.launch_server", "--tp-size", "two", "--kv-cache-dtype", "fp9"])
    assert {f.code for f in bad.errors} >= {"sglang.no-model", "bad-type"}
    docker = SGLANG.lint(["docker", "run", "--gpus", "all", "lmsysorg/sglang:v0.5.23", "python3", "-m",
                          "sglang.launch_server", "--model-path", "m"])
    assert docker.valid


def test_plan_with_engine_sglang(capsys):
    assert main(["plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--engine", "sglang", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == "sglang" and doc["argv"][:3] == ["python", "-m", "sglang.launch_server"]


def test_the_catalogs_vllm_image_gives_way_with_a_note_a_named_one_with_a_warning(capsys):
    """The recipe's image serves vLLM; asking for SGLang moves to SGLang's image with a note, while an
    image the user named with --image is a warning (it is not what runs)."""
    assert main(["plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--engine", "sglang", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    image = {f["code"]: f for f in doc["findings"]}["sglang.image"]
    assert doc["docker_image"].startswith("lmsysorg/sglang:") and image["severity"] == "note"
    assert doc["docker_image"] in image["message"] and "vllm/vllm-openai" in image["message"]
    assert main(["plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--engine", "sglang", "--image",
                 "vllm/vllm-openai:v0.11.0", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    image = {f["code"]: f for f in doc["findings"]}["sglang.image"]
    assert image["severity"] == "warning" and "vllm/vllm-openai:v0.11.0" in image["message"]
    assert doc["docker_image"].startswith("lmsysorg/sglang:")


def test_default_mem_fraction_follows_sglangs_rule_of_each_release():
    h100 = 79.19 * 1024
    # unknown device memory: the fallback of the release
    assert default_mem_fraction_static(None) == 0.95 and default_mem_fraction_static(None, version="0.5.19") == 0.88
    # before 0.4.8: by TP x PP on GPUs of at most 80 GiB
    assert [default_mem_fraction_static(h100, tp, 1, "0.4.6.post5") for tp in (1, 2, 4, 8, 16)] == [
        0.88, 0.87, 0.85, 0.81, 0.79]
    # 0.4.8-0.5.2: a reserve by the GPU's memory, (9.5 + TP x PP / 2) GiB on an H100
    assert default_mem_fraction_static(h100, 8, 1, "0.5.2") == round((h100 - 13.5 * 1024) / h100, 3)
    # 0.5.3: 512 + 1.5 x 8192 + 2 x 256 (decode graphs) + 1/8 GiB, above the 10 GiB floor
    assert default_mem_fraction_static(h100, 1, 1, "0.5.3") == round((h100 - 13440) / h100, 3)
    # a small step budget stays under the floor on a large GPU
    assert default_mem_fraction_static(80 * 1024, version="0.5.3", chunked_prefill_size=2048) == 0.875
    # 0.5.10: prefill graphs reserve 8 MiB per captured size (58 up to 8192 tokens), 1.5 GiB on MLA
    assert default_mem_fraction_static(h100, 1, 1, "0.5.10") == round((h100 - 13440 - 58 * 8) / h100, 3)
    assert default_mem_fraction_static(h100, 1, 1, "0.5.10", mla=True) == round((h100 - 13440 - 1536) / h100, 3)
    # speculative decoding: 2 GiB, 4 GiB from 0.5.10, none for n-gram
    assert default_mem_fraction_static(h100, 1, 1, "0.5.3", speculative="eagle") == round((h100 - 15488) / h100, 3)
    assert default_mem_fraction_static(h100, 1, 1, "0.5.3", speculative="ngram") == round((h100 - 13440) / h100, 3)


def test_an_sglang_plan_budgets_the_fraction_its_release_picks(capsys):
    """Weights and the KV pool are the fraction; activations live in the rest, so the pool is what
    weights and the runtime leave of it; a fraction the launch names is kept."""
    assert main(["fit", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--engine", "sglang", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    report = doc["report"] if "report" in doc else doc
    fraction = default_mem_fraction_static(139.8 * 1024, report["tp"], report["pp"])
    assert report["budget_gib"] == pytest.approx(139.8 * fraction, abs=0.01)
    assert report["activation_gib"] == 0.0
    assert report["available_kv_gib"] == pytest.approx(
        report["budget_gib"] - report["weights_gib_per_rank"] - report["runtime_gib"], abs=0.01)
    assert main(["fit", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--engine", "sglang", "--gpu-memory-utilization",
                 "0.8", "--format", "json"]) == 0
    named = json.loads(capsys.readouterr().out)
    assert (named["report"] if "report" in named else named)["budget_gib"] == pytest.approx(139.8 * 0.8, abs=0.01)
