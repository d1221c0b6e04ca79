"""The versioned catalogs against the real parsers of releases installed only as minimal parser
environments (scripts/install_parser_envs.sh): vLLM 0.33.0 and SGLang 0.5.23."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from parser_envs import parser_python
from test_lint_agreement import VLLM_CASES, _disagreements
from test_lint_reference import reference_commands  # noqa: F401 - the fixture

from servekit.engines.common.translation import DialectContext
from servekit.engines.lint import lint_argv
from servekit.engines.registry import get_engine
from servekit.jsonl import objects

pytestmark = pytest.mark.engine
REPO = Path(__file__).resolve().parents[2]


def _probe(python: Path, script: str, lines: list[list[str]]) -> list[dict]:
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    proc = subprocess.run([str(python), str(REPO / "scripts" / script)], input=payload, text=True,
                          capture_output=True, check=True, timeout=1200,
                          env={**os.environ, "VLLM_TARGET_DEVICE": "cpu"})
    out = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(out) == len(lines), proc.stderr[-2000:]
    return out


def test_vllm_033_lint_agrees_with_its_real_parser() -> None:
    real = _probe(parser_python("vllm-0.33.0"), "probe_vllm_parser.py", VLLM_CASES)
    linted = [lint_argv("vllm", "0.33.0", ["vllm", "serve", *case]) for case in VLLM_CASES]
    assert _disagreements(VLLM_CASES, real, linted) == []
    assert 25 <= sum(r["accepted"] for r in real) <= len(VLLM_CASES) - 25


def test_every_sglang_argv_servekit_emits_passes_sglangs_parser(reference_commands) -> None:  # noqa: F811
    sglang = get_engine("sglang")
    launches = [sglang.translate(list(c), DialectContext()) for c in reference_commands]
    argvs = sorted({launch.argv for launch in launches})
    real = _probe(parser_python("sglang-0.5.23"), "probe_sglang_parser.py", [list(a[3:]) for a in argvs])
    refused = [f"{' '.join(a)}: {r['message']}" for a, r in zip(argvs, real, strict=True) if not r["accepted"]]
    linted_invalid = {a for a in argvs if not sglang.lint(list(a)).valid}
    # what SGLang refuses, the plan says why (an error finding), and nothing else is refused
    assert [r for r, a in zip(refused, [a for a, v in zip(argvs, real) if not v["accepted"]]) if a not in linted_invalid] == []
    assert len(argvs) > 10 and len(refused) < len(argvs)
