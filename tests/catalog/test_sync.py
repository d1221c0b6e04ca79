"""``servekit catalog sync`` / ``catalog list`` and the layered default catalog, on small catalogs
the tests write (no network, no ../shared)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from servekit.catalog import store
from servekit.catalog.documents import bundled_catalog_dir, read_documents, resolve_catalog_dir
from servekit.catalog.layers import layer_of
from servekit.cli.app import main
from testing.catalog_sources import make_bare_repo, make_tar, make_zip, repo_copy, serve_folder

from .conftest import RECIPE, MiniCatalog

TOY_GPU = """\
  toy_gpu:
    brand: NVIDIA
    generation: hopper
    display_name: "Toy GPU"
    gpu_count: 1
    vram_gb: 80
tasks:"""


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def source(mini: MiniCatalog) -> MiniCatalog:
    """The mini catalog plus a profile and a recipe id the bundled catalog also defines."""
    mini.replace("taxonomy.yaml", "tasks:", TOY_GPU)
    mini.replace("taxonomy.yaml", 'display_name: "H200"', 'display_name: "H200 (synced)"')
    mini.write("models/Qwen/Qwen3.8-27B.yaml", RECIPE.replace('title: "Model"', 'title: "Synced copy"'))
    return mini


def synced(capsys, src: str | Path) -> dict:
    code, out, err = run(capsys, "catalog", "sync", str(src), "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_sync_from_a_directory_layers_under_the_bundled_catalog(source, capsys):
    record = synced(capsys, source.root)
    assert record["changed"] and record["kind"] == "directory" and record["recipe_count"] == 2
    assert record["revision"] == record["content_hash"] and record["file_count"] == 7
    docs = read_documents(resolve_catalog_dir())
    bundled = {p.relative_to(bundled_catalog_dir() / "models").with_suffix("").as_posix()
               for p in (bundled_catalog_dir() / "models").rglob("*.yaml")}
    assert set(docs.recipes) == bundled | {"Org/Model"}
    assert docs.recipes["Qwen/Qwen3.8-27B"]["meta"]["title"] != "Synced copy"  # bundled wins
    assert docs.sources["models/Qwen/Qwen3.8-27B"].is_relative_to(bundled_catalog_dir())
    synced_file = docs.sources["models/Org/Model"]
    assert synced_file == store.synced_catalog_root() / "models/Org/Model.yaml"
    assert layer_of(docs.root, synced_file) == store.synced_catalog_root()
    profiles = docs.taxonomy["hardware_profiles"]
    assert "toy_gpu" in profiles and profiles["h200"]["display_name"] == "H200"  # bundled h200 wins
    assert list(profiles)[0] == "h100"  # the bundled order comes first


def test_only_recipes_reads_one_recipe_from_the_layers(source, capsys):
    synced(capsys, source.root)
    docs = read_documents(resolve_catalog_dir(), only_recipes=["Org/Model"])
    assert list(docs.recipes) == ["Org/Model"]
    assert "single_node_tp" in docs.strategies


def test_catalog_option_and_env_select_one_directory_alone(source, capsys, monkeypatch):
    synced(capsys, source.root)
    assert sorted(read_documents(resolve_catalog_dir(str(source.root))).recipes) == ["Org/Model", "Qwen/Qwen3.8-27B"]
    assert "Org/Model" not in read_documents(resolve_catalog_dir(str(bundled_catalog_dir()))).recipes
    monkeypatch.setenv("SERVEKIT_CATALOG", str(source.root))
    assert "toy_gpu" in read_documents(resolve_catalog_dir()).taxonomy["hardware_profiles"]
    assert "h100" not in read_documents(resolve_catalog_dir()).taxonomy["hardware_profiles"]


def test_second_sync_with_nothing_new_changes_nothing(source, capsys):
    first = synced(capsys, source.root)
    snapshot = store.current_snapshot()
    stamp = (snapshot / store.RECORD_FILE).stat().st_mtime_ns
    code, out, err = run(capsys, "catalog", "sync", str(source.root))
    assert code == 0, err
    assert out.startswith("already up to date: 2 recipes from")
    assert store.current_snapshot() == snapshot and (snapshot / store.RECORD_FILE).stat().st_mtime_ns == stamp
    assert store.read_record().synced_at == first["synced_at"]
    assert [p.name for p in (store.store_dir() / "snapshots").iterdir()] == [snapshot.name]


def test_a_changed_source_replaces_the_copy_and_drops_the_old_one(source, capsys):
    synced(capsys, source.root)
    old = store.current_snapshot()
    source.replace("models/Org/Model.yaml", 'title: "Model"', 'title: "Model v2"')
    record = synced(capsys, source.root)
    assert record["changed"] and store.current_snapshot() != old
    assert read_documents(resolve_catalog_dir()).recipes["Org/Model"]["meta"]["title"] == "Model v2"
    assert old.exists()  # a reader that followed the old link a moment ago can still finish
    assert not synced(capsys, source.root)["changed"] and not old.exists()  # the next sync drops it


def test_sync_from_tar_and_zip_archives_finds_the_catalog_below_the_top_folder(source, capsys, tmp_path):
    repo = repo_copy(source.root, tmp_path / "src")
    tar_record = synced(capsys, make_tar(repo, tmp_path / "recipes.tar.gz"))
    assert tar_record["kind"] == "archive" and tar_record["revision"].startswith("sha256:")
    source.replace("models/Org/Model.yaml", 'title: "Model"', 'title: "Model v2"')
    nested = repo_copy(source.root, tmp_path / "nested" / "repo", top="catalog").parent
    zip_record = synced(capsys, make_zip(nested, tmp_path / "recipes.zip"))
    assert zip_record["changed"] and zip_record["recipe_count"] == 2
    assert (store.synced_catalog_root() / "taxonomy.yaml").is_file()


def test_sync_from_an_archive_url_on_loopback(source, capsys, tmp_path):
    served = tmp_path / "www"
    served.mkdir()
    make_tar(repo_copy(source.root, tmp_path / "src"), served / "main.tar.gz")
    with serve_folder(served) as base:
        record = synced(capsys, f"{base}/main.tar.gz")
        assert record["kind"] == "archive-url" and record["revision"].startswith("etag:")
        code, out, err = run(capsys, "catalog", "sync", f"{base}/missing.tar.gz")
    assert code == 1 and "answered HTTP 404" in err and "stays in use" in err
    assert read_documents(resolve_catalog_dir(), only_recipes=["Org/Model"]).recipes


def test_sync_from_a_bare_git_repository(source, capsys, tmp_path):
    bare, commit = make_bare_repo(source.root, tmp_path / "recipes.git")
    record = synced(capsys, bare.as_uri())
    assert record["kind"] == "git" and record["revision"] == f"git:{commit}"
    assert not (store.synced_catalog_root() / ".git").exists()


def test_unreachable_default_source_is_one_line_and_the_old_copy_stays(source, capsys, monkeypatch):
    monkeypatch.setattr("servekit.catalog.fetch.DEFAULT_SOURCE", "http://127.0.0.1:9/recipes/main.tar.gz")
    code, out, err = run(capsys, "catalog", "sync")
    assert code == 1 and err.count("\n") == 1
    assert "cannot reach http://127.0.0.1:9/recipes/main.tar.gz" in err
    assert "no catalog has been synced yet" in err
    synced(capsys, source.root)
    code, out, err = run(capsys, "catalog", "sync")
    assert code == 1 and err.count("\n") == 1
    assert f"the catalog synced less than a minute ago from {source.root} stays in use" in err
    assert "Org/Model" in read_documents(resolve_catalog_dir()).recipes


def test_failed_validation_refuses_the_sync_and_keeps_the_old_copy(source, capsys, tmp_path):
    synced(capsys, source.root)
    before = store.current_snapshot()
    broken = MiniCatalog(tmp_path / "broken")
    broken.write("taxonomy.yaml", source.read("taxonomy.yaml"))
    broken.write("models/Org/Other.yaml", "meta: [unclosed\n")
    code, out, err = run(capsys, "catalog", "sync", str(broken.root))
    assert code == 1
    assert f"{broken.root}/models/Org/Other.yaml:2:1: malformed YAML" in err and "not synced" in err
    assert "stays in use" in err
    assert store.current_snapshot() == before
    assert "Org/Model" in read_documents(resolve_catalog_dir()).recipes


def test_warnings_are_reported_and_kept(source, capsys):
    source.replace("models/Org/Model.yaml", "    precision: bf16\n", "    precision: bf16\n    colour: red\n")
    code, out, err = run(capsys, "catalog", "sync", str(source.root))
    assert code == 0, err
    assert f"{source.root}/models/Org/Model.yaml:" in out and "warning: unknown key 'colour'" in out
    assert "1 warning(s)" in out
    assert store.read_record().warnings == 1


def test_an_error_after_staging_leaves_the_earlier_catalog(source, capsys, monkeypatch):
    synced(capsys, source.root)
    before = store.current_snapshot()
    source.replace("models/Org/Model.yaml", 'title: "Model"', 'title: "Model v2"')

    def fail(staging, record):
        assert (staging / "catalog" / "models/Org/Model.yaml").is_file()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("servekit.catalog.sync.publish", fail)
    code, out, err = run(capsys, "catalog", "sync", str(source.root))
    assert code == 1 and "No space left on device" in err and "stays in use" in err
    assert store.current_snapshot() == before
    assert not list(store.store_dir().glob("staging-*"))
    assert read_documents(resolve_catalog_dir()).recipes["Org/Model"]["meta"]["title"] == "Model"


_KILLED_SYNC = textwrap.dedent("""\
    import pathlib, sys, time
    import servekit.catalog.sync as sync

    def stall(*args):
        pathlib.Path(sys.argv[1]).write_text("staged")
        time.sleep(120)

    sync._validate = stall
    from servekit.cli.app import main
    sys.exit(main(["catalog", "sync", sys.argv[2]]))
""")


def test_a_sync_killed_midway_leaves_the_earlier_catalog_working(source, capsys, tmp_path):
    synced(capsys, source.root)
    before = store.current_snapshot()
    source.replace("models/Org/Model.yaml", 'title: "Model"', 'title: "Model v2"')
    flag = tmp_path / "staged"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_SYNC, str(flag), str(source.root)], env=dict(os.environ))
    try:
        deadline = time.monotonic() + 60
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), "the sync never reached validation"
        assert list(store.store_dir().glob("staging-*"))
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -9
    assert store.current_snapshot() == before
    assert read_documents(resolve_catalog_dir()).recipes["Org/Model"]["meta"]["title"] == "Model"
    record = synced(capsys, source.root)  # the next sync clears what the killed one left
    assert record["changed"] and not list(store.store_dir().glob("staging-*"))


def test_a_second_concurrent_sync_is_refused(source, capsys):
    with store.sync_lock():
        code, out, err = run(capsys, "catalog", "sync", str(source.root))
    assert code == 1 and "another `servekit catalog sync` is running" in err


@pytest.mark.parametrize("name, kind", [
    ("../evil.yaml", "file"), ("/abs/evil.yaml", "file"), ("top/link", "symlink"), ("top/hard", "hardlink"),
])
def test_archives_with_members_outside_the_target_are_refused(tmp_path, capsys, name, kind):
    archive = tmp_path / "bad.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo(name)
        if kind == "symlink":
            info.type, info.linkname = tarfile.SYMTYPE, "../../outside"
        elif kind == "hardlink":
            info.type, info.linkname = tarfile.LNKTYPE, "../outside"
        tar.addfile(info, None if kind != "file" else __import__("io").BytesIO(b""))
    code, out, err = run(capsys, "catalog", "sync", str(archive))
    assert code == 1 and ("outside" in err), err
    assert not (tmp_path / "evil.yaml").exists() and store.current_snapshot() is None


def test_a_source_without_a_catalog_or_missing_says_so(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, out, err = run(capsys, "catalog", "sync", str(tmp_path / "empty"))
    assert code == 1 and "no folder in it holds both models/ and taxonomy.yaml" in err
    code, out, err = run(capsys, "catalog", "sync", str(tmp_path / "nope"))
    assert code == 1 and "does not exist" in err


def test_catalog_list_shows_the_catalogs_in_use(source, capsys):
    code, out, err = run(capsys, "catalog", "list", "--format", "json")
    assert code == 0 and [c["name"] for c in json.loads(out)] == ["bundled"]
    synced(capsys, source.root)
    code, out, err = run(capsys, "catalog", "list", "--format", "json")
    rows = json.loads(out)
    assert [c["name"] for c in rows] == ["bundled", "synced"]
    assert rows[1]["source"] == str(source.root) and rows[1]["recipes"] == 2 and rows[1]["age_seconds"] >= 0
    code, out, err = run(capsys, "catalog", "list")
    assert code == 0 and "synced: 2 recipes from" in out and "synced less than a minute ago" in out
    code, out, err = run(capsys, "catalog", "list", "--catalog", str(source.root), "--format", "json")
    assert [c["name"] for c in json.loads(out)] == [str(source.root)]


def test_sources_are_told_apart(tmp_path):
    from servekit.catalog.fetch import classify

    default = classify(None)
    assert (default.kind, default.location) == (
        "archive-url", "https://github.com/vllm-project/recipes/archive/refs/heads/main.tar.gz")
    assert classify("https://example.com/recipes.git").kind == "git"
    assert classify("git+https://example.com/recipes").location == "https://example.com/recipes"
    assert classify("git@github.com:vllm-project/recipes.git").kind == "git"
    assert classify("https://example.com/recipes.zip").kind == "archive-url"
    (tmp_path / "a.tgz").write_bytes(b"")
    assert classify(str(tmp_path / "a.tgz")).kind == "archive"
    assert classify(str(tmp_path)).kind == "directory"
