"""The stored vLLM catalogs against the real parsers they came from: re-extraction gives the stored
data, and lint at a past release agrees with that release's own parser.

Uses the vLLM 0.33.0 minimal parser environment (scripts/install_parser_envs.sh). 0.33.0 is
re-extracted from that environment as it is; 0.31.0 through scripts/extract_vllm_releases.py
(its wheel, 320 MB, fetched once into .servekit-ci/vllm-releases or $SERVEKIT_VLLM_RELEASES_DIR,
and its own modules imported ahead of the environment's). Cost on a 2-core machine: about three
minutes (the 0.31.0 download the first time, each extraction 20-60 s, the probe about a minute).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from parser_envs import parser_python
from test_lint_agreement import VLLM_CASES, _disagreements

from servekit.engines.common.flags import read_stored_json
from servekit.engines.lint import lint_argv
from servekit.engines.vllm.catalog import CATALOGS
from servekit.engines.vllm.config_fields import config_fields_path
from servekit.jsonl import objects

pytestmark = pytest.mark.engine
REPO = Path(__file__).resolve().parents[2]
PAST = "0.31.0"  # needs no overlay packages: the 0.33 environment imports its parser as it is
CACHE = Path(os.environ.get("SERVEKIT_VLLM_RELEASES_DIR") or REPO / ".servekit-ci" / "vllm-releases")


@pytest.fixture(scope="module")
def past_release(tmp_path_factory) -> Path:
    """0.31.0's catalog and config fields, freshly extracted into a temporary folder."""
    python = parser_python("vllm-0.33.0")
    out = tmp_path_factory.mktemp("extracted")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "extract_vllm_releases.py"), PAST,
                           "--out", str(out), "--cache", str(CACHE), "--python", str(python)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_033_reextracts_to_the_stored_catalog() -> None:
    python = parser_python("vllm-0.33.0")
    proc = subprocess.run([str(python), str(REPO / "scripts" / "extract_vllm_flags.py")], capture_output=True,
                          text=True, check=True, timeout=900, cwd=REPO / "scripts",
                          env={**os.environ, "VLLM_TARGET_DEVICE": "cpu"})
    assert json.loads(proc.stdout) == read_stored_json(CATALOGS.path("0.33.0"))


def test_past_release_reextracts_to_the_stored_catalog_and_fields(past_release: Path) -> None:
    assert read_stored_json(past_release / f"vllm-{PAST}.json.gz") == read_stored_json(CATALOGS.path(PAST))
    assert read_stored_json(past_release / f"vllm-{PAST}-config-fields.json.gz") == read_stored_json(
        config_fields_path(PAST))


def test_lint_at_a_past_release_agrees_with_its_real_parser(past_release: Path) -> None:
    """The 0.32 agreement cases, at 0.31.0: its own parser (scripts/probe_vllm_parser.py run on the
    release's modules) and lint on its stored catalog accept and refuse the same commands."""
    tree = CACHE / "src" / PAST
    payload = "".join(json.dumps(case) + "\n" for case in VLLM_CASES)
    proc = subprocess.run([str(parser_python("vllm-0.33.0")), str(REPO / "scripts" / "probe_vllm_parser.py")],
                          input=payload, text=True, capture_output=True, check=True, timeout=1200,
                          env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "PYTHONPATH": str(tree)})
    real = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(real) == len(VLLM_CASES), proc.stderr[-2000:]
    linted = [lint_argv("vllm", PAST, ["vllm", "serve", *case]) for case in VLLM_CASES]
    assert _disagreements(VLLM_CASES, real, linted) == []
    assert 25 <= sum(r["accepted"] for r in real) <= len(VLLM_CASES) - 25
