"""Fixtures for the static API tests: the golden tree (read from its .xz) and one build."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference"
GOLDEN_TAR = REFERENCE / "golden" / "api-visible.tar.xz"


@pytest.fixture(scope="session")
def golden_tree() -> dict[str, object]:
    """Every JSON file of the reference's published tree: relative path -> parsed document."""
    if not GOLDEN_TAR.is_file():
        pytest.skip("../shared/reference/golden/api-visible.tar.xz is not present")
    out: dict[str, object] = {}
    with tarfile.open(GOLDEN_TAR, "r:xz") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".json"):
                name = member.name.removeprefix("./")
                out[name] = json.loads(tar.extractfile(member).read())
    return out


@pytest.fixture(scope="session")
def reference_build(reference_catalog, tmp_path_factory) -> Path:
    """The API tree built from the reference catalog, on disk, through the CLI."""
    from servekit.cli.app import main

    out = tmp_path_factory.mktemp("api") / "site"
    assert main(["api", "build", "--out", str(out), "--catalog", str(reference_catalog)]) == 0
    return out


@pytest.fixture(scope="session")
def reference_docs(reference_catalog):
    from servekit.catalog.documents import read_documents

    return read_documents(reference_catalog)


@pytest.fixture(scope="session")
def recorded_build(reference_docs):
    """The same build in memory, in one process, with what each rendering came from."""
    from servekit.api.build import build_in_memory

    tree, summary, requests = build_in_memory(reference_docs, keep_requests=True)
    return tree, summary, requests
