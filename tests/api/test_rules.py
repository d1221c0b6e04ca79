"""Builder rules on small catalogs written for each test (real synthesis, real files).

The taxonomy, strategies and KV-store deployments are the reference catalog's; the recipes
are minimal ones written here, so each rule is seen in isolation.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from servekit.api.build import build_in_memory
from servekit.catalog.documents import read_documents

RECIPE = """\
meta:
  title: "{title}"
  provider: "Acme"
  tasks: [{tasks}]
model:
  model_id: "{model_id}"
  min_vllm_version: "0.10.0"
features:
  tool_calling:
    args: ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
  reasoning:
    args: ["--reasoning-parser", "qwen3"]
opt_in_features: [reasoning]
variants:
  default:
    precision: bf16
    vram_minimum_gb: 20
{extra_variants}
compatible_strategies: [single_node_tp, multi_node_tp]
"""


def _recipe(model_id: str, *, tasks: str = "text", extra_variants: str = "") -> str:
    return RECIPE.format(title=model_id.split("/")[1], model_id=model_id, tasks=tasks,
                         extra_variants=textwrap.indent(extra_variants, "  "))


@pytest.fixture
def catalog(tmp_path, reference_catalog) -> Path:
    root = tmp_path / "catalog"
    root.mkdir()
    shutil.copy(reference_catalog / "taxonomy.yaml", root / "taxonomy.yaml")
    shutil.copytree(reference_catalog / "strategies", root / "strategies")
    shutil.copytree(reference_catalog / "kv_store", root / "kv_store")
    (root / "models").mkdir()
    return root


def _write(root: Path, recipe_id: str, text: str) -> None:
    path = root / "models" / f"{recipe_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _build(root: Path):
    tree, summary, _ = build_in_memory(read_documents(root))
    return tree, summary


FP8 = """\
fp8:
  model_id: "Acme/Model-7B-FP8"
  precision: fp8
  vram_minimum_gb: 10
"""


def test_recipe_document_shape_and_default_files(catalog):
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B"))
    tree, summary = _build(catalog)
    doc = tree.get("Acme/Model-7B.json")
    assert list(doc)[:3] == ["hf_id", "meta", "recommended_command"]
    assert "compatible_strategies" not in doc and "strategy_overrides" not in doc
    head = doc["recommended_command"]
    default_hw = next(iter(head["by_hardware"]))
    assert head["hardware"] == default_hw and head["strategy"] == "single_node_tp"
    # opt-in features stay off in the recommended command
    assert "--enable-auto-tool-choice" in head["argv"] and "--reasoning-parser" not in head["argv"]
    assert tree.get(f"Acme/Model-7B/hw/{default_hw}.json")["argv"] == head["argv"]
    for link in [*head["by_hardware"].values(), *head.get("alternatives", {}).values()]:
        assert link.lstrip("/") in tree
    assert doc["model"]["install"]["docker"] == {"command": "docker pull vllm/vllm-openai:latest"}
    assert summary.recipes == 1 and summary.promoted == 0 and not summary.skipped


def test_variant_with_its_own_repository_is_promoted(catalog):
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B", extra_variants=FP8))
    tree, summary = _build(catalog)
    parent = tree.get("Acme/Model-7B.json")
    assert parent["variants"]["fp8"]["json"] == "/Acme/Model-7B-FP8.json"
    twin = tree.get("Acme/Model-7B-FP8.json")
    assert twin["hf_id"] == "Acme/Model-7B-FP8"
    assert twin["meta"]["derived_from"] == "Acme/Model-7B" and twin["meta"]["variant"] == "fp8"
    assert twin["model"]["model_id"] == "Acme/Model-7B-FP8"
    assert twin["variants"] == {"default": {"precision": "fp8", "vram_minimum_gb": 10}}
    assert twin["recommended_command"]["variant"] == "fp8"
    assert "Acme/Model-7B-FP8" in twin["recommended_command"]["argv"]
    rows = tree.get("models.json")
    assert [r["hf_id"] for r in rows] == ["Acme/Model-7B", "Acme/Model-7B-FP8"]
    assert rows[1]["url"] == "/Acme/Model-7B" and rows[1]["derived_from"] == "Acme/Model-7B"
    assert summary.promoted == 1


def test_standalone_recipe_wins_over_a_promotion(catalog):
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B", extra_variants=FP8))
    _write(catalog, "Acme/Model-7B-FP8", _recipe("Acme/Model-7B-FP8"))
    tree, summary = _build(catalog)
    assert "json" not in tree.get("Acme/Model-7B.json")["variants"]["fp8"]
    assert "derived_from" not in tree.get("Acme/Model-7B-FP8.json")["meta"]
    assert summary.promoted == 0


def test_omni_recipes_get_no_commands(catalog):
    _write(catalog, "Acme/Speech", _recipe("Acme/Speech", tasks="omni"))
    tree, _ = _build(catalog)
    assert "recommended_command" not in tree.get("Acme/Speech.json")
    assert not [p for p in tree if p.startswith("Acme/Speech/")]


def test_models_index_follows_file_name_order(catalog):
    for rid in ("Acme/M2.yaml", "Acme/M2.1.yaml", "Acme/M-2", "Beta/a"):
        rid = rid.removesuffix(".yaml")
        _write(catalog, rid, _recipe(rid))
    tree, _ = _build(catalog)
    assert [r["hf_id"] for r in tree.get("models.json")] == ["Acme/M-2", "Acme/M2.1", "Acme/M2", "Beta/a"]


def test_build_info_lists_the_intentional_differences(catalog):
    from servekit.differences import DIFFERENCES

    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B", extra_variants=FP8))
    tree, _ = _build(catalog)
    info = tree.get("servekit.json")["servekit"]
    assert info["recipes"] == 1 and info["promoted_variants"] == 1 and info["skipped_renderings"] == []
    assert [d["id"] for d in info["differences_from_reference"]] == [d.id for d in DIFFERENCES]


def test_quickstarts_are_published_by_hardware(catalog):
    (catalog / "quickstart").mkdir()
    (catalog / "quickstart" / "h100.yaml").write_text(
        "hardware_profile: 8x-h100\ntitle: Eight H100s\nupdated: 2026-01-02\n"
    )
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B"))
    tree, _ = _build(catalog)
    assert tree.get("quickstart/8x-h100.json") == {
        "hardware_profile": "8x-h100", "title": "Eight H100s", "updated": "2026-01-02"
    }
    assert "platforms.json" not in tree  # the catalog has no platforms.yaml


def test_recipes_in_different_parts_promoting_one_id_match_the_sequential_build(catalog, tmp_path):
    """Later recipe wins a shared promoted id, whichever worker rendered the earlier one."""
    import json

    from servekit.api.publish import build_api

    shared = FP8.replace("Acme/Model-7B-FP8", "Acme/Shared-FP8")
    _write(catalog, "Acme/Alpha", _recipe("Acme/Alpha", extra_variants=shared))
    _write(catalog, "Acme/Beta", _recipe("Acme/Beta", extra_variants=shared.replace("10", "12")))
    tree, _ = _build(catalog)
    out = tmp_path / "site"
    summary = build_api(out, catalog, jobs=2)
    written = {p.relative_to(out).as_posix() for p in out.rglob("*.json")}
    assert written == set(tree)
    assert summary.files == len(tree)
    for rel in tree:
        assert json.loads((out / rel).read_text()) == tree.get(rel), rel
    assert tree.get("Acme/Shared-FP8.json")["meta"]["derived_from"] == "Acme/Beta"
    assert [r["hf_id"] for r in tree.get("models.json")] == [
        "Acme/Alpha", "Acme/Beta", "Acme/Shared-FP8", "Acme/Shared-FP8"
    ]


def test_recipe_documents_carry_servekit_facts_under_their_own_key(catalog):
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B", extra_variants=FP8))
    tree, _ = _build(catalog)
    for rel, variant in (("Acme/Model-7B.json", "default"), ("Acme/Model-7B-FP8.json", "fp8")):
        doc = tree.get(rel)
        own = doc["servekit"]
        assert own["min_vllm_version"] == "0.10.0"
        assert own["features"] == ["tool_calling"]
        assert isinstance(own["differences_from_reference"], list)
        sources = {tuple(a["arg"]): a["source"] for a in own["provenance"]["serve"]["args"]}
        assert any("tool_calling" in src for src in sources.values()), sources
        assert doc["recommended_command"]["variant"] == variant


def test_a_rendering_that_fails_is_skipped_and_reported(catalog, monkeypatch):
    """A combination synthesis cannot render leaves out that file only, with the reason."""
    import servekit.api.render as render

    real = render.render_plan

    def fail_on_multi_node(plan):
        if plan.selection.strategy == "multi_node_tp":
            raise ValueError("boom")
        return real(plan)

    monkeypatch.setattr(render, "render_plan", fail_on_multi_node)  # an injected fault
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B"))
    tree, summary = _build(catalog)
    assert summary.skipped and all("multi_node_tp" in s and "ValueError: boom" in s for s in summary.skipped)
    assert not [p for p in tree if p.startswith("Acme/") and p.endswith("/multi_node_tp.json")]
    assert "recommended_command" in tree.get("Acme/Model-7B.json")
    assert tree.get("servekit.json")["servekit"]["skipped_renderings"] == sorted(summary.skipped)


def test_a_broken_hardware_step_skips_that_hardware_only(catalog, monkeypatch):
    import servekit.api.build as build

    real = build.render_hardware

    def fail_on_b200(ctx, recipe, variant_key, hw, render):
        if hw == "b200":
            raise KeyError("broken profile")
        return real(ctx, recipe, variant_key, hw, render)

    monkeypatch.setattr(build, "render_hardware", fail_on_b200)  # an injected fault
    _write(catalog, "Acme/Model-7B", _recipe("Acme/Model-7B"))
    tree, summary = _build(catalog)
    assert summary.skipped == ["Acme/Model-7B / default / b200: internal error KeyError: 'broken profile'"]
    by_hw = tree.get("Acme/Model-7B.json")["recommended_command"]["by_hardware"]
    assert "b200" not in by_hw and "h200" in by_hw
