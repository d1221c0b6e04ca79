"""The shared perf points (../shared/reference/perf-points-visible.jsonl, read in place)."""

from __future__ import annotations

import json

import pytest

from servekit.app.request import load_documents
from servekit.hardware import profiles_for
from testing.shared import REFERENCE

VISIBLE_PERF = REFERENCE / "perf-points-visible.jsonl"


@pytest.fixture(scope="session")
def perf_points() -> list[dict]:
    if not VISIBLE_PERF.is_file():
        pytest.skip(f"{VISIBLE_PERF} is not present")
    return [json.loads(line) for line in VISIBLE_PERF.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def profiles():
    return profiles_for(load_documents(None).taxonomy)
