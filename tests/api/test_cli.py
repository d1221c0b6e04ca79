"""``servekit api build`` end to end: summary line, exit codes, bundled catalog."""

from __future__ import annotations

import json
import shutil

import pytest

from servekit.api.output import state_dir
from servekit.catalog.documents import bundled_catalog_dir
from servekit.cli.app import main


def test_bundled_catalog_builds(tmp_path, capsys):
    if not (bundled_catalog_dir() / "taxonomy.yaml").is_file():
        pytest.skip("the bundled catalog is not there yet")
    out = tmp_path / "site"
    assert main(["api", "build", "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("wrote ") and str(out) in line and "recipes" in line
    rows = json.loads((out / "models.json").read_text())
    assert rows
    for row in rows:
        doc = json.loads((out / row["json"].lstrip("/")).read_text())
        assert doc["hf_id"] == row["hf_id"]
        for link in (doc.get("recommended_command") or {}).get("by_hardware", {}).values():
            assert (out / link.lstrip("/")).is_file()
    assert json.loads((out / "taxonomy.json").read_text())["hardware_profiles"]


SMALL_RECIPES = ("Qwen3-8B", "Qwen3-4B", "Qwen3-32B")


@pytest.fixture
def small_catalog(tmp_path, reference_catalog):
    """The reference vocabulary and strategies with three of its recipes."""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    shutil.copy(reference_catalog / "taxonomy.yaml", catalog / "taxonomy.yaml")
    shutil.copytree(reference_catalog / "strategies", catalog / "strategies")
    shutil.copytree(reference_catalog / "kv_store", catalog / "kv_store")
    (catalog / "models" / "Qwen").mkdir(parents=True)
    for name in SMALL_RECIPES:
        shutil.copy(reference_catalog / "models" / "Qwen" / f"{name}.yaml", catalog / "models" / "Qwen")
    return catalog


def test_catalog_option_and_rebuild_in_place(tmp_path, capsys, small_catalog):
    out = tmp_path / "site"
    assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog)]) == 0
    (out / "stale.json").write_text("{}")
    assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog)]) == 0
    assert f"{len(SMALL_RECIPES)} recipes" in capsys.readouterr().out
    assert (out / "Qwen" / "Qwen3-8B.json").is_file()
    assert not (out / "stale.json").exists()  # the old tree was replaced, not merged into
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["catalog", "site", state_dir(out).name])


def test_rebuild_is_incremental_unless_full(tmp_path, capsys, small_catalog):
    out = tmp_path / "site"
    argv = ["api", "build", "--out", str(out), "--catalog", str(small_catalog)]
    assert main(argv) == 0
    capsys.readouterr()
    recipe = small_catalog / "models" / "Qwen" / f"{SMALL_RECIPES[0]}.yaml"
    recipe.write_text(recipe.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert main(argv) == 0
    line = capsys.readouterr().out
    if "incremental: re-rendered" not in line:  # servekit's own files changed meanwhile (an editable install)
        assert main(argv) == 0
        line = capsys.readouterr().out
    assert f"{len(SMALL_RECIPES)} recipes" in line and "incremental: re-rendered" in line
    assert main([*argv, "--full"]) == 0
    line = capsys.readouterr().out
    assert "incremental: re-rendered" not in line and f"{len(SMALL_RECIPES)} recipes" in line


def test_missing_catalog_is_one_line_error(tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["api", "build", "--out", str(out), "--catalog", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "catalog directory does not exist" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_broken_recipe_leaves_previous_tree(tmp_path, capsys, small_catalog):
    out = tmp_path / "site"
    assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog)]) == 0
    (out / "keep.json").write_text("{}")
    (small_catalog / "models" / "Qwen" / "Bad.yaml").write_text("meta: [unclosed\n")
    assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog)]) == 1
    assert "Bad.yaml" in capsys.readouterr().err
    assert (out / "keep.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["catalog", "site", state_dir(out).name])


def test_jobs_must_be_positive(tmp_path, capsys, small_catalog):
    out = tmp_path / "site"
    assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog), "--jobs", "0"]) == 1
    assert "--jobs must be at least 1" in capsys.readouterr().err
    assert not out.exists()


def test_one_job_builds_the_same_tree(tmp_path, small_catalog):
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["api", "build", "--out", str(one), "--catalog", str(small_catalog), "--jobs", "1"]) == 0
    assert main(["api", "build", "--out", str(two), "--catalog", str(small_catalog), "--jobs", "2"]) == 0
    files = sorted(p.relative_to(one).as_posix() for p in one.rglob("*.json"))
    assert files == sorted(p.relative_to(two).as_posix() for p in two.rglob("*.json"))
    for rel in files:
        assert json.loads((one / rel).read_text()) == json.loads((two / rel).read_text()), rel


def test_an_unrelated_directory_is_never_replaced(tmp_path, capsys, small_catalog):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "todo.txt").write_text("keep me")
    assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog)]) == 1
    assert "holds no API tree" in capsys.readouterr().err
    assert (out / "todo.txt").read_text() == "keep me"
    assert main(["api", "build", "--out", str(tmp_path), "--catalog", str(small_catalog)]) == 1
    assert "holds the catalog" in capsys.readouterr().err
    assert (small_catalog / "taxonomy.yaml").is_file()


def test_out_onto_a_file_or_under_one_is_one_line_error(tmp_path, capsys, small_catalog):
    blocker = tmp_path / "afile"
    blocker.write_text("keep me")
    for out, expected in ((blocker, "exists and is not a directory"), (blocker / "sub" / "site", "which is a file")):
        assert main(["api", "build", "--out", str(out), "--catalog", str(small_catalog)]) == 1
        err = capsys.readouterr().err
        assert expected in err and len(err.strip().splitlines()) == 1, err
    assert blocker.read_text() == "keep me"


def test_a_misshapen_recipe_is_the_validators_error_not_a_crash(tmp_path, capsys, small_catalog):
    recipe = small_catalog / "models" / "Qwen" / f"{SMALL_RECIPES[0]}.yaml"
    text = recipe.read_text(encoding="utf-8")
    assert "\nmodel:\n" in text
    recipe.write_text(text.replace("\nmodel:\n", "\nmodel: 5\nwas_model:\n"), encoding="utf-8")
    assert main(["api", "build", "--out", str(tmp_path / "site"), "--catalog", str(small_catalog)]) == 1
    err = capsys.readouterr().err
    assert f"{recipe}:" in err and "model: expected a mapping" in err and "internal error" not in err, err
    assert not (tmp_path / "site").exists()
