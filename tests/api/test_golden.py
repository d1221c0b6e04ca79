"""The API built from the reference catalog equals the reference site's tree, file for file.

The golden tree covers part of the recipes; every file it has must be written, and be equal
as JSON (object key order and number spelling aside). Failures name the file and the first
differing key path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from golden_diff import first_difference

SHOWN = 25


def _compare(golden: dict, built: Path, wanted: Callable[[str], bool]) -> tuple[int, list[str]]:
    problems: list[str] = []
    checked = 0
    for rel, expected in golden.items():
        if not wanted(rel):
            continue
        checked += 1
        path = built / rel
        if not path.is_file():
            problems.append(f"{rel}: not written")
            continue
        found = first_difference(expected, json.loads(path.read_bytes()))
        if found:
            problems.append(f"{rel}: {found}")
    return checked, problems


def _assert_equal(golden: dict, built: Path, wanted: Callable[[str], bool]) -> None:
    checked, problems = _compare(golden, built, wanted)
    assert checked > 0, "the golden tree has no files of this kind"
    shown = "\n".join(problems[:SHOWN])
    more = f"\n... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    assert not problems, f"{len(problems)} of {checked} files differ:\n{shown}{more}"


def _is_catalog_doc(rel: str) -> bool:
    return "/" not in rel or rel.split("/")[0] in ("strategies", "kv_store", "quickstart")


def _is_recipe_doc(rel: str) -> bool:
    return rel.count("/") == 1 and not _is_catalog_doc(rel)


def _is_hardware_rendering(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 4 and parts[2] == "hw"


def _is_alternative(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) >= 4 and parts[-2] == "strategies" and not _is_catalog_doc(rel)


def test_every_golden_file_is_written(golden_tree, reference_build):
    written = {p.relative_to(reference_build).as_posix() for p in reference_build.rglob("*.json")}
    missing = sorted(set(golden_tree) - written)
    assert not missing, f"{len(missing)} golden files not written, e.g. {missing[:10]}"
    assert len(written) >= len(golden_tree)


def test_every_golden_file_is_classified(golden_tree):
    kinds = (_is_catalog_doc, _is_recipe_doc, _is_hardware_rendering, _is_alternative)
    unclassified = [rel for rel in golden_tree if not any(kind(rel) for kind in kinds)]
    assert not unclassified


def test_catalog_documents_match(golden_tree, reference_build):
    _assert_equal(golden_tree, reference_build, _is_catalog_doc)


def test_recipe_documents_match(golden_tree, reference_build):
    _assert_equal(golden_tree, reference_build, _is_recipe_doc)


def test_hardware_renderings_match(golden_tree, reference_build):
    _assert_equal(golden_tree, reference_build, _is_hardware_rendering)


def test_alternative_renderings_match(golden_tree, reference_build):
    _assert_equal(golden_tree, reference_build, _is_alternative)
