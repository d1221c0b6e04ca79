"""The shared reference points (../shared/reference/kv-points-visible.jsonl, read in place) with the
structured fields the project keeps for their free text (data/kv_points_structured.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servekit.fit.point_table import load_table, read_points, structured
from testing.shared import REFERENCE

VISIBLE_POINTS = REFERENCE / "kv-points-visible.jsonl"
STRUCTURED_TABLE = Path(__file__).parent / "data" / "kv_points_structured.yaml"


@pytest.fixture(scope="session")
def raw_points() -> list[tuple[str, dict]]:
    """(point id, line as written) of every visible point."""
    if not VISIBLE_POINTS.is_file():
        pytest.skip(f"{VISIBLE_POINTS} is not present")
    return read_points(VISIBLE_POINTS)


@pytest.fixture(scope="session")
def structured_points(raw_points) -> list[tuple[str, dict]]:
    """(point id, line with the table's structured fields laid over it) of every visible point."""
    table = load_table(STRUCTURED_TABLE)
    return [(pid, structured(pid, point, table)) for pid, point in raw_points]
