"""Every API rendering of a checkpoint with shipped facts says whether it can start."""

from __future__ import annotations

import json
import shutil

from servekit.api import build_api
from servekit.catalog.documents import bundled_catalog_dir


def _read(root, rel):
    return json.loads((root / rel).read_text(encoding="utf-8"))


def test_renderings_carry_fit_checks(tmp_path):
    out = tmp_path / "site"
    build_api(out, bundled_catalog_dir(), jobs=1)
    doc = _read(out, "Qwen/Qwen3.8-27B/hw/rtx_5090.json")
    fit = doc["servekit"]["checks"]["fit"][0]
    assert fit["ok"] is True
    # the rendering's check is the plan's own fit report: `servekit fit` on the same selection gives it
    from servekit.app.fit import FitOptions, run_fit

    check, _ = run_fit(FitOptions(model="Qwen/Qwen3.8-27B", hardware="rtx_5090", variant=doc["variant"]))
    assert check.to_dict()["report"]["kv_tokens"] == fit["report"]["kv_tokens"] > 0
    headline = _read(out, "Qwen/Qwen3.8-27B.json")["recommended_command"]
    assert headline["servekit"]["checks"]["fit"][0]["ok"] is True
    # a rendering keeps the reference's layout; when it does not fit, servekit's check names the one that does
    h100 = _read(out, "Qwen/Qwen3.8-27B/hw/h100.json")
    assert h100["argv"][h100["argv"].index("--tensor-parallel-size") + 1] == "1"
    fit = h100["servekit"]["checks"]["fit"][0]
    assert fit["fits"] is False
    assert [f["fix"] for f in fit["findings"] if f["code"] == "fit-layout"] == ["--strategy single_node_tp --tp 2"]


def test_a_strategy_that_cannot_start_is_reported_not_offered_silently(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), catalog)
    recipe = catalog / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    text = recipe.read_text(encoding="utf-8")
    assert "compatible_strategies:\n  - single_node_tp\n" in text
    recipe.write_text(
        text.replace("compatible_strategies:\n  - single_node_tp\n",
                     "compatible_strategies:\n  - single_node_tp\n  - multi_node_tp\n"),
        encoding="utf-8",
    )
    out = tmp_path / "site"
    build_api(out, catalog, jobs=1)
    doc = _read(out, "Qwen/Qwen3.8-27B/hw/h100/strategies/multi_node_tp.json")
    assert "--tensor-parallel-size" in doc["head_argv"]
    assert doc["head_argv"][doc["head_argv"].index("--tensor-parallel-size") + 1] == "16"
    fit = doc["servekit"]["checks"]["fit"][0]
    assert fit["ok"] is False
    codes = {f["code"] for f in fit["findings"] if f["severity"] == "error"}
    assert "tp-attention-heads" in codes


def test_checkpoints_without_facts_carry_no_checks(tmp_path, reference_catalog):
    from servekit.catalog.documents import read_documents
    from servekit.api import build_tree

    docs = read_documents(reference_catalog, only_recipes=["Qwen/Qwen3-8B"])
    tree, _ = build_tree(docs)
    rendered = [tree.get(k) for k in tree if k.startswith("Qwen/Qwen3-8B/hw/") and k.endswith(".json")]
    assert rendered
    assert all("servekit" not in doc for doc in rendered)
