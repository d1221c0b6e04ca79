"""The import-linter layers contract names every top-level module of servekit, and the
Hugging Face cache helpers sit below the layers that use them."""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path

import servekit
from servekit import hfcache
from servekit.warm import hub

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _layered_modules() -> set[str]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    assert config["root_package"] == "servekit"
    return {name.split(".", 1)[1] for layer in contract["layers"] for name in re.findall(r"servekit\.\w+", layer)}


def test_every_top_level_module_has_a_layer():
    modules = {m.name for m in pkgutil.iter_modules(servekit.__path__)} - {"catalog_data"}
    assert modules - _layered_modules() == set()


def test_the_test_extra_pins_import_linter():
    extra = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]["test"]
    assert any(req.startswith("import-linter==") for req in extra)


def test_hub_cache_location_has_one_home(monkeypatch, tmp_path):
    assert hub.hub_cache_dir is hfcache.hub_cache_dir and hub.offline_requested is hfcache.offline_requested
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hfcache.hub_cache_dir() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "explicit"))
    assert hfcache.hub_cache_dir() == tmp_path / "explicit"
    monkeypatch.setenv("HF_HUB_OFFLINE", "yes")
    assert hfcache.offline_requested()
