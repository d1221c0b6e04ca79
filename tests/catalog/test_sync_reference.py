"""The public catalog (a local copy of ../shared/reference/catalog) synced from an archive and
from a git repository, then used without --catalog."""

from __future__ import annotations

import json

import pytest

from servekit.catalog import store
from servekit.cli.app import main
from testing.catalog_sources import make_bare_repo, make_tar, repo_copy, serve_folder


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def public_repo(reference_catalog, tmp_path):
    """A copy of the public catalog laid out like the recipes repository's archive."""
    return repo_copy(reference_catalog, tmp_path / "src")


def _check_public_catalog_in_use(capsys) -> None:
    code, out, err = run(capsys, "list", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) >= 170
    assert {r["source"] for r in rows} == {"bundled", "synced"}
    code, out, err = run(capsys, "plan", "Qwen/Qwen3-8B", "--hardware", "h100", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["argv"][:3] == ["vllm", "serve", "Qwen/Qwen3-8B"]


def test_public_catalog_synced_from_an_archive_url_plans_without_catalog(public_repo, tmp_path, capsys):
    served = tmp_path / "www"
    served.mkdir()
    make_tar(public_repo, served / "main.tar.gz")
    with serve_folder(served) as base:
        code, out, err = run(capsys, "catalog", "sync", f"{base}/main.tar.gz")
        assert code == 0, err
        assert "synced 173 recipes from" in out
        code, out, err = run(capsys, "catalog", "sync", f"{base}/main.tar.gz")
    assert code == 0 and out.startswith("already up to date: 173 recipes")
    _check_public_catalog_in_use(capsys)


def test_public_catalog_synced_from_git(public_repo, tmp_path, capsys):
    bare, commit = make_bare_repo(public_repo, tmp_path / "recipes.git")
    code, out, err = run(capsys, "catalog", "sync", bare.as_uri())
    assert code == 0, err
    assert store.read_record().revision == f"git:{commit}"
    _check_public_catalog_in_use(capsys)
