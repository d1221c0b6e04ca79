"""Fixtures for the synthesis tests: the reference catalog, read once, and its golden selections."""

from __future__ import annotations

import pytest

from servekit.jsonl import read_objects
from testing.shared import REFERENCE

GOLDEN_SELECTIONS = REFERENCE / "golden" / "selections-visible.jsonl.xz"


@pytest.fixture(scope="session")
def reference_docs(reference_catalog):
    from servekit.catalog.documents import read_documents

    return read_documents(reference_catalog)


@pytest.fixture(scope="session")
def golden_selections() -> list[dict]:
    """Every line of the reference's selections file, decompressed from its .xz."""
    if not GOLDEN_SELECTIONS.is_file():
        pytest.skip("../shared/reference/golden/selections-visible.jsonl.xz is not present")
    return read_objects(GOLDEN_SELECTIONS)
