"""``plan --batch`` over a catalog with misshapen recipes: the catalog is validated at most once a run,
and lines are answered as they are read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import servekit.catalog.validate as validate
from servekit.app.batch import plan_lines
from servekit.app.request import load_documents
from servekit.catalog.documents import bundled_catalog_dir
from servekit.cli.app import main
from servekit.jsonl import objects

MISSHAPEN = ("\nmodel:\n", "\nmodel: 5\nwas_model:\n")  # the recipe's model block becomes a number
COPIES = 5


def _catalog(tmp_path: Path) -> tuple[Path, list[str], list[str]]:
    """The bundled catalog with COPIES copies of each recipe under new ids; the first copy of each is
    misshapen. Returns the root, the sound ids and the misshapen ids."""
    root = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), root)
    models = root / "models"
    sound, misshapen = [], []
    for original in sorted(models.rglob("*.yaml")):
        rid = original.relative_to(models).with_suffix("").as_posix()
        text = original.read_text(encoding="utf-8")
        assert MISSHAPEN[0] in text
        for copy in range(COPIES):
            new_id = f"copy-{copy}/{rid.replace('/', '--')}"
            target = models / f"{new_id}.yaml"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text.replace(*MISSHAPEN) if copy == 0 else text, encoding="utf-8")
            (misshapen if copy == 0 else sound).append(new_id)
    return root, sound, misshapen


def _lines(sound: list[str], misshapen: list[str]) -> list[dict]:
    lines = []
    for i in range(60):
        rid = (misshapen if i % 3 == 0 else sound)[i % 4]
        line = {"recipe": rid, "hardware": "h200", "strategy": "single_node_tp"}
        if i % 5 == 1:
            line["variant"] = "no_such_variant"
        lines.append(line)
    return lines


@pytest.fixture
def counted(monkeypatch) -> list[Path]:
    """Every whole-catalog validation, by root."""
    calls: list[Path] = []
    real = validate.check_catalog

    def counting(root):
        calls.append(Path(root))
        return real(root)

    monkeypatch.setattr(validate, "check_catalog", counting)
    return calls


def test_a_batch_validates_the_catalog_once_however_many_lines_trip(capsys, tmp_path, counted) -> None:
    root, sound, misshapen = _catalog(tmp_path)
    lines = _lines(sound, misshapen)
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    code = main(["plan", "--batch", str(path), "--catalog", str(root)])
    out = objects(capsys.readouterr().out.splitlines())
    assert code == 0 and len(out) == len(lines)
    tripped = [o["error"] for line, o in zip(lines, out, strict=True) if line["recipe"] in misshapen]
    assert len(tripped) == 20
    assert all("model: expected a mapping" in e and str(root / "models") in e for e in tripped)
    assert counted == [root]  # twenty lines tripped over misshapen recipes: one validation
    planned = [o for line, o in zip(lines, out, strict=True) if line["recipe"] in sound and "variant" not in line]
    assert planned and all("argv" in o for o in planned)


def test_a_batch_that_never_trips_never_validates(tmp_path, counted) -> None:
    root, sound, _ = _catalog(tmp_path)
    docs = load_documents(str(root))
    results = list(plan_lines(docs, [json.dumps({"recipe": rid, "hardware": "h200", "strategy": "single_node_tp"})
                                     for rid in sound[:6]]))
    assert all("argv" in r for r in results)
    assert counted == []


def test_lines_are_answered_as_they_are_read(tmp_path) -> None:
    """The input is read one line ahead of the answers, so memory does not grow with the batch."""
    root, sound, misshapen = _catalog(tmp_path)
    docs = load_documents(str(root))
    read: list[int] = []

    def source():
        for i, line in enumerate(_lines(sound, misshapen)):
            read.append(i)
            yield json.dumps(line)

    answers = plan_lines(docs, source())
    for count in range(1, 6):
        next(answers)
        assert len(read) == count
