"""A past SGLang release's stored catalog equals a fresh extraction by its own parser
(scripts/extract_sglang_history.sh in the sglang-history parser environment of
scripts/install_parser_envs.sh). Cost: one ~1 MB wheel download and one parser build, about
30 seconds; the other stored releases are checked by the fast tests in test_catalog_history.py."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest
from parser_envs import parser_python

from servekit.engines.sglang.specs import CATALOGS

pytestmark = pytest.mark.engine
REPO = Path(__file__).resolve().parents[2]
SAMPLE = "0.5.2"


def test_a_past_sglang_release_re_extracts_to_the_stored_catalog(tmp_path: Path) -> None:
    python = parser_python("sglang-history")
    env = {**os.environ, "OUT_DIR": str(tmp_path), "SERVEKIT_CACHE": str(tmp_path / "cache"),
           "SERVEKIT_PARSERS_DIR": str(python.parents[2])}
    proc = subprocess.run(["bash", str(REPO / "scripts" / "extract_sglang_history.sh"), SAMPLE], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fresh = json.loads(gzip.decompress((tmp_path / f"sglang-{SAMPLE}.json.gz").read_bytes()))
    stored = json.loads(gzip.decompress(CATALOGS.path(SAMPLE).read_bytes()))
    assert fresh == stored
