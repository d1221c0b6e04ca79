"""Fixtures for warm-cache tests: tiny repos served by a real loopback hub."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing.hub_server import HubServer
from testing.tiny_model import add_duplicate_formats, write_tiny_llama
from warm_repos import DRAFT, MODEL

from servekit.warm.hub import HubSettings


@pytest.fixture(scope="session")
def repo_folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("repos")
    model = write_tiny_llama(root / "model", shards=2)
    add_duplicate_formats(model)
    draft = write_tiny_llama(root / "draft", seed=3)
    return {MODEL: model, DRAFT: draft}


@pytest.fixture()
def hub(repo_folders):
    with HubServer() as server:
        for repo_id, folder in repo_folders.items():
            server.add_repo(repo_id, folder)
        yield server


@pytest.fixture()
def settings(hub, tmp_path) -> HubSettings:
    return HubSettings(endpoint=hub.endpoint, cache_dir=tmp_path / "hf-cache", offline=False)
