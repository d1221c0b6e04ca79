"""The parallel layout: the recipe's default, else the smallest layout that fits (``servekit.app.layout``).

The fit model judges the layouts with the model facts that ship for the bundled checkpoints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

import servekit
from servekit.app.fit_all import FitAllOptions, fit_all
from servekit.app.request import PlanRequest, load_documents
from servekit.app.warm import targets_from_plan
from servekit.catalog.documents import bundled_catalog_dir
from servekit.catalog.domain import recipe_of, strategies_of
from servekit.cli.app import main
from servekit.synthesis.layouts import parallel_layouts

SEED = "Qwen/Qwen3.8-27B"


def _plan(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["plan", *args, "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _tp(argv: list) -> int:
    return int(argv[argv.index("--tensor-parallel-size") + 1])


def _fit(doc: dict) -> dict:
    return doc["servekit"]["checks"]["fit"][0]


def test_plan_on_h100_takes_the_smallest_tp_that_fits(capsys):
    """The recipe's rule gives TP 1, whose KV pool cannot hold one request of the recipe's
    context; TP 2 is the size ``fit --all --gpus 2`` finds for the same variant."""
    code, doc, err = _plan(capsys, SEED, "--hardware", "h100")
    assert code == 0, err
    assert _tp(doc["argv"]) == 2 and _fit(doc)["fits"] is True
    provenance = {a["arg"][0]: a["source"] for a in doc["servekit"]["provenance"]["serve"]["args"]}
    assert provenance["--tensor-parallel-size"].startswith("fit: ")
    assert any(n.startswith("layout chosen by fit: ") and "TP 2" in n for n in doc["servekit"]["notes"])
    row = next(r for r in fit_all(FitAllOptions(hardware="h100", gpus=2))
               if r["recipe"] == SEED and r["variant"] == doc["variant"])
    assert row["fits"] is True and row["tp"] == 2
    # a default that fits is kept as the recipe sets it
    code, doc, err = _plan(capsys, SEED, "--hardware", "h200")
    assert code == 0 and _tp(doc["argv"]) == 1
    assert not any(n.startswith("layout chosen by fit") for n in doc["servekit"]["notes"])


@pytest.mark.parametrize("named", [["--tp", "1"], ["--strategy", "single_node_tp"]])
def test_a_named_layout_is_kept_and_told_the_one_that_fits(capsys, named):
    code, doc, _ = _plan(capsys, SEED, "--hardware", "h100", *named)
    assert code == 1 and _tp(doc["argv"]) == 1
    fit = _fit(doc)
    assert fit["fits"] is False
    layout = next(f for f in fit["findings"] if f["code"] == "fit-layout")
    assert layout["fix"] == "--strategy single_node_tp --tp 2" and "TP 2" in layout["message"]
    code, doc, err = _plan(capsys, SEED, "--hardware", "h100", *layout["fix"].split())
    assert code == 0 and _tp(doc["argv"]) == 2, err


def test_every_surface_plans_the_same_layout(capsys):
    code, cli, _ = _plan(capsys, SEED, "--hardware", "h100", "--no-checks")
    catalog = servekit.Catalog.load()
    assert catalog.render(catalog.plan(SEED, hardware="h100"))["argv"] == cli["argv"]
    assert main(["fit", SEED, "--hardware", "h100", "--format", "json"]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["report"]["tp"] == 2 and fitted["argv"] == [str(a) for a in cli["argv"]]
    warmed = targets_from_plan(PlanRequest(SEED, hardware="h100", checks=False))
    assert [list(t.argv) for t in warmed.targets] == [[str(a) for a in cli["argv"]]]


def test_layouts_are_walked_fewest_devices_first():
    docs = load_documents(None)
    profile = docs.taxonomy["hardware_profiles"]["h100"]
    layouts = parallel_layouts(recipe_of(docs, SEED), profile, "h100", strategies_of(docs), "single_node_tp")
    assert [layout.devices for layout in layouts] == sorted(layout.devices for layout in layouts)
    assert [(layout.strategy, layout.tp) for layout in layouts][:4] == [
        ("single_node_tp", 1), ("single_node_tp", 2), ("single_node_tp", 4), ("single_node_tp", 8)]
    assert layouts[1].options() == "--strategy single_node_tp --tp 2"


def _one_gpu_nodes_catalog(root: Path) -> Path:
    """The bundled catalog with hardware of one 24 GB GPU per node and the seed recipe offering
    multi-node tensor parallelism too."""
    copy = root / "catalog"
    shutil.copytree(bundled_catalog_dir(), copy)
    taxonomy = yaml.safe_load((copy / "taxonomy.yaml").read_text(encoding="utf-8"))
    taxonomy["hardware_profiles"]["a10_node"] = {
        "brand": "NVIDIA", "generation": "ampere", "display_name": "A10 node", "description": "one A10 per node",
        "gpu_count": 1, "vram_gb": 24, "multi_node": True, "kind": "gpu", "platform": "cuda",
        "compute_target": "cuda:sm_86", "precisions": [], "interconnect": "pcie"}
    (copy / "taxonomy.yaml").write_text(yaml.safe_dump(taxonomy, sort_keys=False), encoding="utf-8")
    recipe = copy / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    text = recipe.read_text(encoding="utf-8")
    assert "compatible_strategies:\n  - single_node_tp\n" in text, "the bundled recipe changed; update the test"
    recipe.write_text(text.replace("compatible_strategies:\n  - single_node_tp\n",
                                   "compatible_strategies:\n  - single_node_tp\n  - multi_node_tp\n"), encoding="utf-8")
    return copy


def test_a_model_no_node_holds_takes_the_fewest_nodes_that_fit(capsys, tmp_path):
    """27B parameters in bf16 on 24 GB nodes: the default rule's two nodes do not hold them; the
    plan takes the fewest nodes that do, and every smaller count is refused naming that one."""
    catalog = str(_one_gpu_nodes_catalog(tmp_path))
    code, doc, err = _plan(capsys, SEED, "--hardware", "a10_node", "--catalog", catalog)
    assert code == 0, err
    chosen = doc["node_count"]
    assert doc["strategy"] == "multi_node_tp" and chosen > 2
    assert _tp(doc["head_argv"]) == chosen and all(f["fits"] for f in doc["servekit"]["checks"]["fit"])
    sources = {a["source"] for a in doc["servekit"]["provenance"]["head"]["args"]
               if a["arg"][0] in ("--tensor-parallel-size", "--nnodes")}
    assert all(s.startswith("fit: ") for s in sources) and sources
    for fewer in range(2, chosen):
        code, doc, _ = _plan(capsys, SEED, "--hardware", "a10_node", "--catalog", catalog, "--nodes", str(fewer))
        assert code == 1 and doc["node_count"] == fewer
        layout = next(f for f in _fit(doc)["findings"] if f["code"] == "fit-layout")
        assert layout["fix"] == f"--strategy multi_node_tp --nodes {chosen}"
