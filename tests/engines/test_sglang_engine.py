"""SGLang as an engine package: translation from vLLM launches, lint from its extracted catalog,
its image, warm-cache artifacts and memory hooks."""

from __future__ import annotations

import json

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


def test_default_mem_fraction_follows_sglangs_rule():
    assert default_mem_fraction_static(None) == 0.95
    assert default_mem_fraction_static(80 * 1024, chunked_prefill_size=2048) == round((80 * 1024 - 10 * 1024) / (80 * 1024), 3)
    assert default_mem_fraction_static(24 * 1024) == round((24 * 1024 - (512 + 8192 * 1.5 + 128)) / (24 * 1024), 3)
