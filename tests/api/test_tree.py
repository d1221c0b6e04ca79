"""Publishing the tree: all or nothing, never a half-written directory."""

from __future__ import annotations

import json

import pytest

from servekit.api.tree import ApiTreeError, JsonTree


def _tree(**files):
    tree = JsonTree()
    for rel, value in files.items():
        tree.put(rel.replace("__", "/"), value)
    return tree


def test_publish_writes_nested_files_and_replaces_an_old_tree(tmp_path):
    out = tmp_path / "site"
    _tree(**{"a.json": {"x": 1}, "org__m__hw__h.json": [1, "é"]}).publish(out)
    assert json.loads((out / "org/m/hw/h.json").read_text("utf-8")) == [1, "é"]
    _tree(**{"b.json": {}}).publish(out)
    assert sorted(p.name for p in out.iterdir()) == ["b.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no staging or retired dirs left


def test_failed_write_keeps_the_previous_tree(tmp_path):
    out = tmp_path / "site"
    _tree(**{"keep.json": {"v": 1}}).publish(out)
    broken = _tree(**{"a.json": 1, "a.json__b.json": 2})  # a file cannot also be a directory
    with pytest.raises(ApiTreeError, match="cannot write"):
        broken.publish(out)
    assert json.loads((out / "keep.json").read_text()) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_out_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "site"
    target.write_text("not a dir")
    with pytest.raises(ApiTreeError, match="not a directory"):
        _tree(**{"a.json": 1}).publish(target)
    assert target.read_text() == "not a dir"


def test_drop_subtree_forgets_only_that_folder():
    tree = _tree(**{"o__m.json": 1, "o__m__hw__h.json": 2, "o__m2__hw__h.json": 3})
    tree.drop_subtree("o/m")
    assert sorted(tree) == ["o/m.json", "o/m2/hw/h.json"]


def test_drop_subtree_of_a_top_folder_and_rebuild():
    tree = _tree(**{"o__m__a.json": 1, "o__m__hw__b.json": 2, "p__x.json": 3})
    tree.drop_subtree("o")
    assert sorted(tree) == ["p/x.json"]
    tree.put("o/m/a.json", 4)
    tree.drop_subtree("o/m")
    assert sorted(tree) == ["p/x.json"]


def test_encoding_is_compact_utf8_json_for_any_json_value():
    from servekit.api.tree import encode_json

    value = {"a": [1, 2.5, None, True], "é": "x\n\"y\"", "big": 2**70, "nested": {"k": {}}}
    data = encode_json(value)
    assert json.loads(data) == value
    assert b" " not in data.replace(b"x\\n", b"")
    assert json.loads(encode_json({1: "int key"})) == {"1": "int key"}
