"""``--write-verified``: the recipe keeps its comments, order and formatting; only lines are added."""

from __future__ import annotations

import difflib

import pytest

from servekit.errors import ServekitError
from servekit.launch.evidence import summary
from servekit.launch.recipe_verified import add_verified

RECIPE = """\
# A recipe with comments that must survive.
model:
  id: org/tiny   # inline comment
  base_args: ["--max-model-len", "1024"]

variants:
  default:
    precision: bf16     # odd spacing kept
    extra_args:
      - --enforce-eager
"""

ENTRY = {"date": "2026-01-01", "engine": "vllm 0.32.0", "hardware": "local", "plan_hash": "sha256:ab",
         "ok": True, "probes": ["health", "chat"], "kv_tokens": {"measured": 8, "predicted": 8}}


def _changes(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    added = [d for d in diff if d.startswith("+") and not d.startswith("+++")]
    removed = [d for d in diff if d.startswith("-") and not d.startswith("---")]
    return added, removed


def test_a_first_summary_only_adds_lines(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE)
    add_verified(path, ENTRY)
    added, removed = _changes(RECIPE, path.read_text())
    assert removed == []
    assert added[0] == "+verified:" and any("plan_hash: sha256:ab" in a for a in added)


def test_a_second_summary_appends_to_the_list_and_only_adds_lines(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE)
    add_verified(path, ENTRY)
    once = path.read_text()
    add_verified(path, {**ENTRY, "date": "2026-02-02"})
    added, removed = _changes(once, path.read_text())
    assert removed == []
    assert any("2026-02-02" in a for a in added)

    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load(path.read_text())
    assert [e["date"] for e in doc["verified"]] == ["2026-01-01", "2026-02-02"]
    assert doc["model"]["base_args"] == ["--max-model-len", "1024"]


def test_the_summary_of_an_evidence_record():
    doc = {"ok": True, "engine": "vllm", "engine_version": "0.32.0", "hardware": {"name": "local"},
           "plan_hash": "sha256:1", "verified_at": 0, "probes": [{"name": "chat", "ok": True}],
           "measured": {"kv_tokens": 5, "ready_seconds": 3.5}, "predicted": {"kv_tokens": 5}}
    assert summary(doc) == {"date": "1970-01-01", "engine": "vllm 0.32.0", "hardware": "local",
                            "plan_hash": "sha256:1", "ok": True, "probes": ["chat"],
                            "kv_tokens": {"measured": 5, "predicted": 5}, "ready_seconds": 3.5}


def test_the_edit_replaces_the_file_whole_and_keeps_its_permissions(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE)
    path.chmod(0o640)
    before = path.stat().st_ino
    add_verified(path, ENTRY)
    after = path.stat()
    assert after.st_ino != before  # a new file renamed over the old one, not a rewrite in place
    assert after.st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["recipe.yaml"]  # no temp file left


def test_a_recipe_behind_a_link_is_edited_where_it_points(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text(RECIPE)
    link = tmp_path / "recipe.yaml"
    link.symlink_to(real)
    add_verified(link, ENTRY)
    assert link.is_symlink() and "plan_hash: sha256:ab" in real.read_text()


def test_a_recipe_whose_verified_is_not_a_list_is_left_as_it_was(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE + "verified: yes\n")
    with pytest.raises(ServekitError, match="verified is not a list"):
        add_verified(path, ENTRY)
    assert path.read_text() == RECIPE + "verified: yes\n"
    assert [p.name for p in tmp_path.iterdir()] == ["recipe.yaml"]
