"""Positioned YAML loading: the same data as the fast reader, plus where each key path is."""

from __future__ import annotations

import pytest

from servekit.catalog.documents import read_yaml
from servekit.catalog.positioned import Mark, load_positioned
from servekit.errors import CatalogError

DOC = """\
name: demo
nested:
  list:
    - first
    - {key: 2}
  date: 2026-01-02
anchor: &base {a: 1, b: 2}
merged:
  <<: *base
  b: 3
"""


def test_data_matches_the_fast_reader(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text(DOC)
    doc = load_positioned(path)
    assert doc.data == read_yaml(path)
    assert doc.data["nested"]["date"] == "2026-01-02"
    assert doc.data["merged"] == {"a": 1, "b": 3}


def test_positions_of_keys_values_and_list_items(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text(DOC)
    doc = load_positioned(path)
    assert doc.keys[("nested", "list")] == Mark(3, 3)
    assert doc.values[("nested", "list", 0)] == Mark(4, 7)
    assert doc.values[("nested", "list", 1, "key")] == Mark(5, 13)
    # a path that does not exist falls back to its nearest parent
    assert doc.mark_for(("nested", "list", 1, "missing")) == Mark(5, 7)
    where = doc.location(("nested", "date"), prefer_key=True)
    assert (where.line, where.column, where.key()) == (6, 3, "nested.date")


def test_duplicate_keys_keep_the_last_value_and_are_recorded(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("a: 1\nb:\n  c: 1\n  c: 2\n")
    doc = load_positioned(path)
    assert doc.data == {"a": 1, "b": {"c": 2}}
    assert doc.duplicates == [("b", "c")]
    assert doc.mark_for(("b", "c"), prefer_key=True) == Mark(4, 3)


@pytest.mark.parametrize("text", ["a: [1, 2\nb: 3\n", "a: 'open\n", "a:\n  b: 1\n c: 2\n"])
def test_malformed_yaml_is_a_catalog_error_with_a_line(tmp_path, text):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CatalogError) as info:
        load_positioned(path)
    assert info.value.location.file == str(path)
    assert info.value.location.line is not None
    assert "malformed YAML" in str(info.value)
    with pytest.raises(CatalogError) as fast:  # the fast reader reports the same place
        read_yaml(path)
    assert (fast.value.location, str(fast.value)) == (info.value.location, str(info.value))


def test_unreadable_file_is_a_catalog_error(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(CatalogError, match="cannot read file"):
        load_positioned(path)
    with pytest.raises(CatalogError, match="cannot read file: not UTF-8 text"):
        read_yaml(path)


def test_self_referencing_alias_is_an_error_not_a_crash(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("a: &x [1, *x]\n")
    with pytest.raises(CatalogError, match="alias refers to the collection") as info:
        load_positioned(path)
    assert info.value.location.key() == "a[1]"
    with pytest.raises(CatalogError, match="alias refers to the collection"):
        read_yaml(path)


def test_unknown_tag_is_reported_at_its_line(tmp_path):
    path = tmp_path / "tag.yaml"
    path.write_text("a: 1\nb: !custom 1\n")
    with pytest.raises(CatalogError) as info:
        load_positioned(path)
    assert info.value.location.line == 2
