"""The API built from the reference catalog equals the reference site's tree, file for file.

The golden tree covers part of the recipes; every file it has must be written, and be equal
as JSON (object key order and number spelling aside). A field may differ only where an entry
of ``servekit.differences`` explains it for the selection that file was rendered from.
Failures name the file and the first differing key path.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import pytest

from servekit.api.render import selection_for
from servekit.differences import explaining

from .golden_diff import first_difference, without_fields

SHOWN = 25


class Explainer:
    """Which fields of a built file the intentional-differences list allows to differ."""

    def __init__(self, docs, requests) -> None:
        self.docs = docs
        self.requests = requests
        self.used: Counter[str] = Counter()

    def fields(self, rel: str) -> set[str]:
        """Fields of a rendering file that an intentional difference explains."""
        return self._explained(rel) if rel in self.requests else set()

    def fields_in_recipe_doc(self, doc: dict) -> set[str]:
        links = (doc.get("recommended_command") or {}).get("by_hardware") or {}
        default_hw_file = next(iter(links.values()), "/")[1:]
        return self._explained(default_hw_file) if default_hw_file in self.requests else set()

    def _explained(self, rel: str) -> set[str]:
        recipe_id, request = self.requests[rel]
        found = explaining(self.docs, selection_for(self.docs, recipe_id, request))
        self.used.update(d.id for d in found)
        return {f for d in found for f in d.fields}


def _difference(rel: str, expected, actual, explainer: Explainer) -> str | None:
    found = first_difference(expected, actual)
    if found is None:
        return None
    if isinstance(expected, dict) and "recommended_command" in expected:
        allowed = explainer.fields_in_recipe_doc(expected)
        expected = {**expected, "recommended_command": without_fields(expected["recommended_command"], allowed)}
        actual = {**actual, "recommended_command": without_fields(actual.get("recommended_command"), allowed)}
    else:
        allowed = explainer.fields(rel)
        expected, actual = without_fields(expected, allowed), without_fields(actual, allowed)
    return first_difference(expected, actual)


@pytest.fixture(scope="module")
def explainer(reference_docs, recorded_build):
    return Explainer(reference_docs, recorded_build[2])


def _assert_equal(golden: dict, built, explainer: Explainer, wanted: Callable[[str], bool]) -> None:
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
        found = _difference(rel, expected, json.loads(path.read_bytes()), explainer)
        if found:
            problems.append(f"{rel}: {found}")
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
    assert len(written) > len(golden_tree)  # the golden tree holds only part of the recipes


def test_every_golden_file_is_classified(golden_tree):
    kinds = (_is_catalog_doc, _is_recipe_doc, _is_hardware_rendering, _is_alternative)
    unclassified = [rel for rel in golden_tree if not any(kind(rel) for kind in kinds)]
    assert not unclassified


def test_catalog_documents_match(golden_tree, reference_build, explainer):
    _assert_equal(golden_tree, reference_build, explainer, _is_catalog_doc)


def test_recipe_documents_match(golden_tree, reference_build, explainer):
    _assert_equal(golden_tree, reference_build, explainer, _is_recipe_doc)


def test_hardware_renderings_match(golden_tree, reference_build, explainer):
    _assert_equal(golden_tree, reference_build, explainer, _is_hardware_rendering)


def test_alternative_renderings_match(golden_tree, reference_build, explainer):
    _assert_equal(golden_tree, reference_build, explainer, _is_alternative)


def test_parallel_build_equals_the_in_process_build(reference_build, recorded_build):
    tree = recorded_build[0]
    written = {p.relative_to(reference_build).as_posix() for p in reference_build.rglob("*.json")}
    assert written == set(tree)
    differing = [rel for rel in tree if json.loads((reference_build / rel).read_bytes()) != tree.get(rel)]
    assert not differing[:10]


def test_every_link_in_the_tree_resolves(reference_build):
    """models.json rows, by_hardware and alternatives links, variant json pointers."""
    rows = json.loads((reference_build / "models.json").read_bytes())
    links = [row["json"] for row in rows]
    for row in rows:
        doc = json.loads((reference_build / row["json"].lstrip("/")).read_bytes())
        assert doc["hf_id"] == row["hf_id"]
        head = doc.get("recommended_command") or {}
        links += list(head.get("by_hardware", {}).values()) + list(head.get("alternatives", {}).values())
        links += [v["json"] for v in (doc.get("variants") or {}).values() if "json" in v]
        for hw_link in head.get("by_hardware", {}).values():
            hw_doc = json.loads((reference_build / hw_link.lstrip("/")).read_bytes())
            links += list(hw_doc.get("alternatives", {}).values())
    dangling = sorted({link for link in links if not (reference_build / link.lstrip("/")).is_file()})
    assert not dangling, dangling[:10]
