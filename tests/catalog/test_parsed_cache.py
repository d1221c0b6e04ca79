"""Parsed catalog documents kept as JSON: the same documents as a parse, and a miss whenever a
file changed, broke or the cache cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.conftest import RECIPE_PATH
from servekit.catalog import parsed_cache
from servekit.catalog.documents import bundled_catalog_dir, read_documents
from servekit.errors import CatalogError


def _entries() -> list[Path]:
    folder = parsed_cache.cache_dir()
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _plain(docs) -> dict:
    return {"taxonomy": docs.taxonomy, "platforms": docs.platforms, "strategies": docs.strategies,
            "kv_store": docs.kv_store, "recipes": docs.recipes, "sources": {k: str(v) for k, v in docs.sources.items()}}


@pytest.mark.parametrize("source", ["bundled", "reference"])
def test_a_cached_read_is_the_parse(source, reference_catalog, monkeypatch) -> None:
    root = bundled_catalog_dir() if source == "bundled" else reference_catalog
    ids = sorted(p.relative_to(root / "models").with_suffix("").as_posix() for p in (root / "models").rglob("*.yaml"))[:3]
    parsed = _plain(read_documents(root, only_recipes=ids))
    assert len(_entries()) == 1 + len(ids)  # the shared documents, and each recipe read on its own
    read = []
    monkeypatch.setattr("servekit.catalog.documents.read_mapping", lambda path, **_: read.append(path))
    assert _plain(read_documents(root, only_recipes=ids)) == parsed
    assert read == []  # nothing parsed the second time


def test_an_edited_file_is_read_again(mini) -> None:
    read_documents(mini.root, only_recipes=["Org/Model"])
    mini.replace(RECIPE_PATH, "  architecture: dense\n", "  architecture: hybrid\n")
    mini.replace("strategies/single_node_tp.yaml", '"Tensor Parallel"', '"TP"')
    docs = read_documents(mini.root, only_recipes=["Org/Model"])
    assert docs.recipes["Org/Model"]["model"]["architecture"] == "hybrid"
    assert docs.strategies["single_node_tp"]["display_name"] == "TP"
    # a touch alone (same bytes, new times) is a miss too, and reads the same documents
    os.utime(mini.root / RECIPE_PATH, ns=(1, 1))
    assert read_documents(mini.root, only_recipes=["Org/Model"]).recipes == docs.recipes


def test_a_new_strategy_file_is_seen(mini) -> None:
    read_documents(mini.root, only_recipes=[])
    text = mini.read("strategies/single_node_tp.yaml").replace("single_node_tp", "single_node_more")
    mini.write("strategies/single_node_more.yaml", text)
    assert "single_node_more" in read_documents(mini.root, only_recipes=[]).strategies


def test_a_broken_file_is_an_error_every_time_and_never_stored(mini) -> None:
    mini.write(RECIPE_PATH, "meta: [unclosed\n")
    for _ in range(2):
        with pytest.raises(CatalogError, match="malformed YAML"):
            read_documents(mini.root, only_recipes=["Org/Model"])
    assert len(_entries()) == 1  # the shared documents only


def test_a_whole_catalog_read_stores_no_recipe(mini) -> None:
    read_documents(mini.root)
    assert len(_entries()) == 1


def test_an_unusable_cache_is_a_miss(mini, monkeypatch, tmp_path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("", encoding="utf-8")
    monkeypatch.setenv("SERVEKIT_HOME", str(home))
    assert read_documents(mini.root, only_recipes=["Org/Model"]).recipes["Org/Model"]
    monkeypatch.setenv("SERVEKIT_HOME", str(tmp_path / "home"))
    read_documents(mini.root, only_recipes=["Org/Model"])
    for entry in _entries():
        entry.write_text("{not json", encoding="utf-8")
    assert read_documents(mini.root, only_recipes=["Org/Model"]).recipes["Org/Model"]
    assert all(json.loads(entry.read_text(encoding="utf-8"))["format"] == parsed_cache.FORMAT for entry in _entries())


def test_a_cold_plan_imports_only_what_it_uses(tmp_path) -> None:
    """A JSON plan from the bundled catalog (its documents parsed once before): no YAML parser, no
    validator or pydantic, no web or API stack, no other engine, no kv-points reader."""
    code = ("import sys; from servekit.cli import run\n"
            "sys.argv = ['servekit', 'plan', 'Qwen/Qwen3.8-27B', '--format', 'json']\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(' '.join(sorted(sys.modules)))")
    env = {**os.environ, "SERVEKIT_HOME": str(tmp_path / "home")}
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert json.loads(done.stdout)["argv"][:3] == ["vllm", "serve", "Qwen/Qwen3.8-27B"]
    modules = set(done.stderr.split())
    unused = ("ruamel", "pydantic", "fastapi", "uvicorn", "httpx", "huggingface_hub", "rich", "hashlib", "psutil",
              "servekit.catalog.validate", "servekit.web", "servekit.api", "servekit.warm", "servekit.k8s",
              "servekit.fit.points", "servekit.engines.max", "servekit.engines.sglang", "servekit.engines.ascend",
              "servekit.engines.qaic")
    used = {"servekit.launch", "servekit.launch.machine"}  # what hardware ``local`` is, not how to launch
    assert sorted(m for m in modules if any(m == u or m.startswith(u + ".") for u in unused)) == []
    assert sorted(m for m in modules if m.startswith("servekit.launch.") and m not in used) == []
