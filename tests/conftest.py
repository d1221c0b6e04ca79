"""Shared fixtures: the real home directory and Hugging Face cache are off limits in tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.shared import REFERENCE, REFERENCE_CATALOG, SHARED  # noqa: F401 - re-exported


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Point every cache servekit or huggingface_hub could write to at a temp dir."""
    root = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SERVEKIT_HOME", str(root / "servekit"))
    monkeypatch.setenv("HF_HOME", str(root / "hf"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
    monkeypatch.delenv("SERVEKIT_CATALOG", raising=False)
    yield


@pytest.fixture(scope="session")
def reference_catalog() -> Path:
    if not REFERENCE_CATALOG.is_dir():
        pytest.skip("../shared/reference/catalog is not present")
    return REFERENCE_CATALOG
