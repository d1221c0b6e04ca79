"""Incremental ``api build``: a rebuild after a recipe edit redoes only that recipe's files,
the result equals a fresh full build byte for byte, and a failed rebuild changes nothing."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from servekit.api import commit as commit_module
from servekit.api import manifest as manifest_module
from servekit.api.build import ApiBuilder
from servekit.api.manifest import manifest_path
from servekit.api.output import state_dir
from servekit.api.publish import build_api
from servekit.api.tree import ApiTreeError
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


def _edit(catalog: Path, recipe_id: str = EDITED, old: str = "", new: str = " (edited)") -> None:
    path = catalog / "models" / f"{recipe_id}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'title: "Qwen3.8-27B{old}"', f'title: "Qwen3.8-27B{new}"', 1), encoding="utf-8")
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


def test_a_file_added_or_removed_by_hand_deep_in_the_tree_is_seen(tmp_path, catalog):
    """The check that the tree holds the manifest's files reads directory stamps: a directory
    whose change time is over a second older than the build that read it is only statted, and
    a file created, removed or renamed in it changes that time."""
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    time.sleep(1.2)
    assert build_api(out, catalog, jobs=2).rerendered == 0  # reads the stamps, now old enough
    dirs = json.loads(manifest_path(out).read_bytes())["dirs"]
    deep = sorted((rel for rel, stamp in dirs.items() if stamp is not None), key=lambda r: -r.count("/"))[0]
    assert deep.count("/") >= 3
    victim = next(p for p in sorted((out / deep).iterdir()) if p.is_file())
    for change in ("add", "remove", "rename"):
        if change == "add":
            (out / deep / "stray.json").write_text("{}")
        elif change == "remove":
            victim.unlink()
        else:
            victim.rename(victim.with_name("renamed.json"))
        assert build_api(out, catalog, jobs=2).rerendered is None, change
        assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog)
        time.sleep(1.2)
        assert build_api(out, catalog, jobs=2).rerendered == 0


def _state_is_tidy(tmp_path: Path, out: Path) -> None:
    """Beside the tree only the catalog and the build state, which holds no stage."""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["catalog", "site", state_dir(out).name])
    assert sorted(p.name for p in state_dir(out).iterdir()) == ["manifest.json", "mirror"]


def _mirror_shares_the_tree(out: Path, but: set[str] = frozenset()) -> None:
    """Every file of the mirror (but ``but``) is a hard link to the tree's file at its path."""
    tree, mirror = _snapshot(out), _snapshot(state_dir(out) / "mirror")
    assert set(tree) - but == set(mirror) - but
    assert all(tree[rel][0] == mirror[rel][0] for rel in set(tree) - but)


def test_the_mirror_is_the_previous_tree_and_shares_its_files(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    _mirror_shares_the_tree(out)
    before = _snapshot(out)
    _edit(catalog)
    assert build_api(out, catalog, jobs=2).rerendered == 1
    mirror = _snapshot(state_dir(out) / "mirror")
    assert {rel: v[2] for rel, v in mirror.items()} == {rel: v[2] for rel, v in before.items()}
    pending = set(json.loads(manifest_path(out).read_bytes())["pending"])
    assert {"models.json", "servekit.json", f"{EDITED}.json"} <= pending
    _mirror_shares_the_tree(out, but=pending)
    path = catalog / "models" / f"{EDITED}.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(" (edited)", "", 1), encoding="utf-8")
    assert build_api(out, catalog, jobs=2).rerendered == 1
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == {rel: v[2] for rel, v in before.items()}
    _state_is_tidy(tmp_path, out)


def test_a_full_rebuild_writes_only_the_files_that_changed(tmp_path, catalog):
    """``--full`` renders everything but writes only files whose bytes changed; every other
    file of the new tree is the previous tree's file (the same inode), and the previous tree
    becomes the mirror as it was, pending at exactly the changed paths."""
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    _edit(catalog)
    assert build_api(out, catalog, jobs=2, full=True).rerendered is None
    after = _snapshot(out)
    changed = {rel for rel in after if rel not in before or after[rel][2] != before[rel][2]}
    assert {"models.json", f"{EDITED}.json"} <= changed
    assert len(changed) < len(after) // 2
    assert all(after[rel][0] == before[rel][0] for rel in set(after) - changed)
    assert all(after[rel][0] != before[rel][0] for rel in changed if rel in before)
    mirror = _snapshot(state_dir(out) / "mirror")
    assert {rel: v[2] for rel, v in mirror.items()} == {rel: v[2] for rel, v in before.items()}
    assert set(json.loads(manifest_path(out).read_bytes())["pending"]) == changed
    assert {rel: v[2] for rel, v in after.items()} == _full(tmp_path, catalog)
    (out / "stray.json").write_text("{}")  # a hand edit, then a full build: the stray goes
    assert build_api(out, catalog, jobs=2, full=True).rerendered is None
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog)
    assert "stray.json" in json.loads(manifest_path(out).read_bytes())["pending"]
    (tmp_path / "copy.json").write_bytes((out / "models.json").read_bytes())
    (out / "models.json").unlink()
    (out / "models.json").symlink_to(tmp_path / "copy.json")  # same bytes, but not a file of the tree
    assert build_api(out, catalog, jobs=2, full=True).rerendered is None
    assert not (out / "models.json").is_symlink()
    (tmp_path / "copy.json").unlink()
    _edit(catalog, old=" (edited)", new="")
    assert build_api(out, catalog, jobs=2).rerendered == 1
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == {rel: v[2] for rel, v in before.items()}
    assert sorted(p.name for p in state_dir(out).iterdir()) == ["manifest.json", "mirror"]


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
    _state_is_tidy(tmp_path, out)


def _fail_in_the_mirror(monkeypatch, out: Path, at: int, error: BaseException) -> dict[str, int]:
    """Make the ``at``-th change to a file of the mirror (unlink, link or create) raise ``error``."""
    mirror = str(state_dir(out) / "mirror")
    calls = {"n": 0}
    real_link, real_open = os.link, os.open

    def counted(real):
        def call(*args, **kwargs):
            target = str(args[1] if real is real_link else args[0])
            creates = real is not real_open or args[1] & os.O_CREAT
            if target.startswith(mirror) and creates:
                calls["n"] += 1
                if calls["n"] == at:
                    raise error
            return real(*args, **kwargs)
        return call

    for name in ("unlink", "link", "open"):
        monkeypatch.setattr(os, name, counted(getattr(os, name)))
    return calls


@pytest.mark.parametrize("fail_at", [1, 4, 40])
def test_a_failure_while_preparing_the_next_version_leaves_the_tree(tmp_path, catalog, monkeypatch, fail_at):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    _edit(catalog)
    assert build_api(out, catalog, jobs=2).rerendered == 1  # so the mirror has pending paths too
    before = _snapshot(out)
    _edit(catalog, "Qwen/Qwen3.8-27B", " (edited)", " (edited twice)")
    calls = _fail_in_the_mirror(monkeypatch, out, fail_at, OSError(28, "No space left on device", "x"))
    with pytest.raises(Exception, match="No space left"):
        build_api(out, catalog, jobs=2)
    monkeypatch.undo()
    monkeypatch.setattr(manifest_module, "environment_digest", lambda: "steady")
    assert calls["n"] >= fail_at
    assert _snapshot(out) == before
    _state_is_tidy(tmp_path, out)
    assert build_api(out, catalog, jobs=2).rerendered == 1  # the old tree is still a valid base
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog)


def test_an_interrupt_while_preparing_the_next_version_leaves_the_tree(tmp_path, catalog, monkeypatch):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    _edit(catalog)
    _fail_in_the_mirror(monkeypatch, out, 5, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        build_api(out, catalog, jobs=2)
    assert _snapshot(out) == before


def test_a_failed_swap_leaves_the_tree(tmp_path, catalog, monkeypatch):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    before = _snapshot(out)
    _edit(catalog)

    def refused(new, current, retired):
        raise OSError(13, "Permission denied", str(current))

    monkeypatch.setattr(commit_module, "exchange", refused)
    with pytest.raises(ApiTreeError, match="Permission denied"):
        build_api(out, catalog, jobs=2)
    monkeypatch.undo()
    monkeypatch.setattr(manifest_module, "environment_digest", lambda: "steady")
    assert _snapshot(out) == before
    _state_is_tidy(tmp_path, out)
    assert build_api(out, catalog, jobs=2).rerendered == 1
    assert {rel: v[2] for rel, v in _snapshot(out).items()} == _full(tmp_path, catalog)


def test_another_directory_in_place_of_the_tree_or_mirror_is_a_full_build(tmp_path, catalog):
    out = tmp_path / "site"
    build_api(out, catalog, jobs=2)
    shutil.copytree(out, tmp_path / "copy")
    shutil.rmtree(out)
    (tmp_path / "copy").rename(out)  # same files, another directory
    assert build_api(out, catalog, jobs=2).rerendered is None
    shutil.rmtree(state_dir(out) / "mirror")
    assert build_api(out, catalog, jobs=2).rerendered is None
    _mirror_shares_the_tree(out)
    shutil.rmtree(state_dir(out))
    assert build_api(out, catalog, jobs=2).rerendered is None
    assert build_api(out, catalog, jobs=2).rerendered == 0
    _state_is_tidy(tmp_path, out)
