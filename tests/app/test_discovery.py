"""``servekit list`` / ``servekit show`` (servekit.app.discovery) on the bundled catalog and on a
small synced one the tests write."""

from __future__ import annotations

import json

import pytest

from catalog.conftest import mini  # noqa: F401 - the fixture, shared with the catalog tests
from catalog.conftest import MiniCatalog
from servekit.app import discovery
from servekit.catalog.documents import read_documents, resolve_catalog_dir
from servekit.cli.app import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def synced(mini: MiniCatalog, capsys) -> MiniCatalog:  # noqa: F811 - the fixture above
    assert main(["catalog", "sync", str(mini.root)]) == 0
    capsys.readouterr()
    return mini


def test_list_json_rows_name_id_source_variants_and_hardware(synced, capsys):
    code, out, err = run(capsys, "list", "--format", "json")
    assert code == 0, err
    rows = {r["id"]: r for r in json.loads(out)}
    assert rows["Org/Model"] == {
        "id": "Org/Model", "display_name": "Model", "source": "synced", "variants": ["default", "fp8"],
        "hardware": ["h200"], "features": ["reasoning", "spec_decoding", "text_only", "encoder_parallel"],
        "tasks": ["text"],
    }
    assert rows["Qwen/Qwen3.8-27B"]["source"] == "bundled"
    assert list(rows) == sorted(rows)


def test_list_filters_by_hardware_and_feature(synced, capsys):
    docs = read_documents(resolve_catalog_dir())
    on_h200 = [r.id for r in discovery.list_recipes(docs, hardware="h200")]
    assert "Org/Model" in on_h200
    assert all(discovery.runs_on(docs.recipes[rid], "h200") for rid in on_h200)
    both = discovery.list_recipes(docs, feature="spec_decoding", hardware="h200")
    assert "Org/Model" in [r.id for r in both]
    assert all("spec_decoding" in [f.name for f in r.features] and r.hardware.get("h200") for r in both)
    code, out, err = run(capsys, "list", "--hardware", "mi300x", "--format", "json")
    assert code == 0 and "Org/Model" not in [r["id"] for r in json.loads(out)]


def test_unknown_names_say_where_the_choices_come_from(capsys):
    code, out, err = run(capsys, "list", "--hardware", "h2000")
    assert code == 1 and "unknown hardware 'h2000'" in err and "`servekit list hardware`" in err
    code, out, err = run(capsys, "list", "--feature", "nope")
    assert code == 1 and "`servekit list features`" in err
    code, out, err = run(capsys, "show", "Nope/Nope")
    assert code == 1 and "unknown recipe 'Nope/Nope'" in err and "`servekit list`" in err
    code, out, err = run(capsys, "list", "hardware", "--hardware", "h200")
    assert code == 1 and "filter recipes" in err


def test_every_name_option_says_where_its_choices_come_from(capsys):
    for command in (["list"], ["show"]):
        assert main([*command, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "`servekit list" in text
    assert main(["list", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "a hardware id from `servekit list hardware`" in text
    assert "a feature name from `servekit list features`" in text


def test_show_by_recipe_or_checkpoint_id(synced, capsys):
    code, out, err = run(capsys, "show", "Org/Model-FP8", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["id"] == "Org/Model" and doc["source"] == "synced" and doc["file"].endswith("models/Org/Model.yaml")
    fp8 = next(v for v in doc["variants"] if v["name"] == "fp8")
    assert fp8["precision"] == "fp8" and fp8["model_id"] == "Org/Model-FP8"
    assert fp8["supported_hardware"] == ["h200", "arch:sm100"]
    spec = next(f for f in doc["features"] if f["name"] == "spec_decoding")
    assert spec["modes"] == ["mtp", "eagle"] and spec["default_mode"] == "mtp" and spec["opt_in"]
    assert doc["strategies"] == ["single_node_tp", "multi_node_tp"] and doc["hardware"] == {"h200": "verified"}
    code, out, err = run(capsys, "show", "Org/Model")
    assert code == 0 and "from: synced" in out and "spec_decoding [opt-in] modes: mtp, eagle (default mtp)" in out
    assert "fp8: fp8 Org/Model-FP8" in out


def test_list_hardware_strategies_and_features(capsys):
    code, out, err = run(capsys, "list", "hardware", "--format", "json")
    hardware = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and hardware["h200"]["display_name"] == "H200" and hardware["h200"]["recipes"] >= 1
    code, out, err = run(capsys, "list", "strategies", "--format", "json")
    assert code == 0 and "single_node_tp" in [r["name"] for r in json.loads(out)]
    code, out, err = run(capsys, "list", "features")
    assert code == 0 and out.splitlines()[0].split() == ["name", "recipes", "modes"]
    assert any(line.startswith("spec_decoding") for line in out.splitlines())


def test_catalog_option_lists_one_directory_by_its_path(synced, capsys):
    code, out, err = run(capsys, "list", "--catalog", str(synced.root), "--format", "json")
    assert code == 0 and [(r["id"], r["source"]) for r in json.loads(out)] == [("Org/Model", str(synced.root))]


def test_a_misshapen_recipe_is_reported_with_its_file_not_a_traceback(mini, capsys):  # noqa: F811 - the fixture
    mini.replace("models/Org/Model.yaml", "  base_args: []", "  base_args: []\nstrategy_overrides: oops")
    code, out, err = run(capsys, "list", "--catalog", str(mini.root))
    assert code == 1 and "Traceback" not in err and "models/Org/Model.yaml" in err
