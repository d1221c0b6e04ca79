"""Incremental ``api build``: a rebuild after a recipe edit redoes only that recipe's files,
the result equals a fresh full build byte for byte, and a failed rebuild changes nothing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from servekit.api import commit as commit_module
from servekit.api import manifest as manifest_module
from servekit.api.build import ApiBuilder
from servekit.api.manifest import manifest_path
from servekit.api.publish import build_api
from servekit.catalog.documents import bundled_catalog_dir

EDITED = "Qwen/Qwen3.8-27B"


@pytest.fixture(autouse=True)
def steady_environment(monkeypatch):
    """servekit's own files may change while the suite runs (an editable install); these tests
    are about the catalog, so the environment part of the manifest is held still."""
    monkeypatch.setattr(manifest_module, "environment_digest", lambda: "steady")


@pytest.fixture
def catalog(tmp_path) -> Path:
    """A copy of the bundled catalog (alone, without the synced layer)."""
    if not (bundled_catalog_dir() / "taxonomy.yaml").is_file():
        pytest.skip("the bundled catalog is not there yet")
    copy = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), copy)
    return copy


def _snapshot(out: Path) -> dict[str, tuple[int, int, bytes]]:
    """Relative path -> (inode, mtime_ns, bytes) of every file under ``out``."""
    found = {}
    for folder, _, files in os.walk(out):
        for name in files:
            path = Path(folder) / name
            info = path.stat()
            found[path.relative_to(out).as_posix()] = (info.st_ino, info.st_mtime_ns, path.read_bytes())
    return found


def _edit(catalog: Path, recipe_id: str = EDITED) -> None:
    path = catalog / "models" / f"{recipe_id}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('title: "Qwen3.8-27B"', 'title: "Qwen3.8-27B (edited)"', 1), encoding="utf-8")
    assert path.read_text(encoding="utf-8") != text


def _full(tmp_path: Path, catalog: Path, name: str = "fresh") -> dict[str, bytes]:
    summary = build_api(tmp_path / name, catalog, jobs=2, full=True)
    assert summary.rerendered is None
    return {rel: data for rel, (_, _, data) in _snapshot(tmp_path / name).items()}


def _own(rel: str, hf_ids: set[str]) -> bool:
    return any(rel == f"{i}.json" or rel.startswith(f"{i}/") for i in hf_ids)


def test_rebuild_after_one_edit_rewrites_only_that_recipe(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    _edit(catalog)
    summary = build_api(out, catalog, jobs=2)
    assert summary.rerendered == 1
    after = _snapshot(out)
    edited_ids = {EDITED} | {
        row["hf_id"] for row in json.loads(after["models.json"][2])
        if row.get("derived_from") == EDITED
    }
    rewritten = {rel for rel in after if rel not in before or after[rel][:2] != before[rel][:2]}
    assert rewritten == {rel for rel in after if _own(rel, edited_ids)} | {"models.json", "servekit.json"}
    assert "Qwen3.8-27B (edited)" in after[f"{EDITED}.json"][2].decode()
    assert {rel: data for rel, (_, _, data) in after.items()} == _full(tmp_path, catalog)


def test_nothing_changed_rewrites_only_the_index_files(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    assert build_api(out, catalog, jobs=2).rerendered == 0
    after = _snapshot(out)
    assert {rel for rel in after if after[rel][:2] != before[rel][:2]} == {"models.json", "servekit.json"}
    assert {rel: v[2] for rel, v in after.items()} == {rel: v[2] for rel, v in before.items()}


def test_adding_and_removing_a_recipe(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    source = catalog / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    added = catalog / "models" / "Qwen" / "Qwen3.8-27B-Copy.yaml"
    added.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    summary = build_api(out, catalog, jobs=2)
    assert summary.rerendered is not None and summary.rerendered >= 1
    assert (out / "Qwen" / "Qwen3.8-27B-Copy.json").is_file()
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog, "with")
    added.unlink()
    assert build_api(out, catalog, jobs=2).rerendered is not None
    assert not (out / "Qwen" / "Qwen3.8-27B-Copy.json").exists()
    assert not (out / "Qwen" / "Qwen3.8-27B-Copy").exists()
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog, "without")


def test_removing_a_recipe_that_another_shadowed(tmp_path, catalog):
    """A recipe whose id another recipe's variant promotes to: while it exists it wins; once it
    is gone, the promoted twin takes its place."""
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    rows = json.loads((out / "models.json").read_text())
    twin = next((r for r in rows if r.get("derived_from")), None)
    if twin is None:
        pytest.skip("the bundled catalog promotes no variant")
    parent = catalog / "models" / f"{twin['derived_from']}.yaml"
    own = catalog / "models" / f"{twin['hf_id']}.yaml"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text(parent.read_text(encoding="utf-8"), encoding="utf-8")
    assert build_api(out, catalog, jobs=2).rerendered is not None
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog, "shadowed")
    own.unlink()
    assert build_api(out, catalog, jobs=2).rerendered is not None
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog, "unshadowed")


def test_changing_the_taxonomy_is_a_full_build(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    taxonomy = catalog / "taxonomy.yaml"
    taxonomy.write_text(taxonomy.read_text(encoding="utf-8") + "\n# edited\nextra_key: 1\n", encoding="utf-8")
    assert build_api(out, catalog, jobs=2).rerendered is None
    assert build_api(out, catalog, jobs=2).rerendered == 0


def test_another_servekit_or_facts_cache_is_a_full_build(tmp_path, catalog, monkeypatch):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    monkeypatch.setattr(manifest_module, "environment_digest", lambda: "changed")
    assert build_api(out, catalog, jobs=2).rerendered is None
    assert build_api(out, catalog, jobs=2).rerendered == 0


def test_the_environment_digest_follows_the_facts_cache(tmp_path, monkeypatch):
    monkeypatch.undo()
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    first = manifest_module.environment_digest()
    assert manifest_module.environment_digest() == first
    (tmp_path / "hub" / "models--org--name" / "snapshots").mkdir(parents=True)
    assert manifest_module.environment_digest() != first


def test_full_forces_a_full_build_and_a_hand_edited_tree_gets_one(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    assert build_api(out, catalog, jobs=2, full=True).rerendered is None
    (out / "stray.json").write_text("{}")
    assert build_api(out, catalog, jobs=2).rerendered is None
    assert not (out / "stray.json").exists()
    manifest_path(out).unlink()
    assert build_api(out, catalog, jobs=2).rerendered is None


def test_a_failure_while_rendering_leaves_the_old_tree(tmp_path, catalog, monkeypatch):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    manifest = manifest_path(out).read_bytes()
    _edit(catalog)

    def broken(self, recipe_id):
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(ApiBuilder, "build_recipe", broken)
    with pytest.raises(RuntimeError, match="renderer crashed"):
        build_api(out, catalog, jobs=2)
    assert _snapshot(out) == before
    assert manifest_path(out).read_bytes() == manifest
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["catalog", "site", manifest_path(out).name])


@pytest.mark.parametrize("fail_after", [0, 3, 40])
def test_a_failure_in_the_middle_of_moving_files_is_undone(tmp_path, catalog, monkeypatch, fail_after):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    manifest = manifest_path(out).read_bytes()
    _edit(catalog)
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src, dst):
        if str(dst).startswith(str(out)):
            calls["n"] += 1
            if calls["n"] == fail_after + 1:  # once: undoing must still work
                raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(commit_module.os, "replace", flaky_replace)
    with pytest.raises(Exception, match="No space left"):
        build_api(out, catalog, jobs=2)
    monkeypatch.setattr(commit_module.os, "replace", real_replace)
    assert calls["n"] > fail_after
    assert _snapshot(out) == before
    assert manifest_path(out).read_bytes() == manifest
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["catalog", "site", manifest_path(out).name])
    assert build_api(out, catalog, jobs=2).rerendered == 1  # the old tree is still a valid base
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog)


def test_an_interrupt_while_moving_files_is_undone(tmp_path, catalog, monkeypatch):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    _edit(catalog)
    real_link = os.link
    calls = {"n": 0}

    def interrupted(src, dst):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return real_link(src, dst)

    monkeypatch.setattr(commit_module.os, "link", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_api(out, catalog, jobs=2)
    assert _snapshot(out) == before
