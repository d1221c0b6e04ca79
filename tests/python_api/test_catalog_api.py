"""The Python API: servekit.Catalog.load(...).plan(...) over the bundled and reference catalogs."""

from __future__ import annotations

import shlex

import pytest

import servekit
from servekit.errors import CatalogError, SelectionError


def test_bundled_catalog_plans_the_seed_recipe():
    catalog = servekit.Catalog.load()
    assert "Qwen/Qwen3.8-27B" in catalog.recipes
    plan = catalog.plan("Qwen/Qwen3.8-27B", hardware="b200", variant="nvfp4")
    assert isinstance(plan, servekit.Plan)
    rendered = catalog.render(plan)
    assert rendered["argv"][:3] == ["vllm", "serve", "Inferact/Qwen3.8-27B-NVFP4"]
    assert shlex.split(rendered["command"].replace("\\\n", " ")) == rendered["argv"]


def test_every_argument_says_which_recipe_key_produced_it():
    catalog = servekit.Catalog.load()
    plan = catalog.plan(
        "Qwen/Qwen3.8-27B", hardware="rtx_pro_6000", enable=["spec_decoding"], modes={"spec_decoding": "mtp"}
    )
    sources = {tuple(p["arg"]): p["source"] for p in plan.processes[0].provenance()}
    spec = next(k for k in sources if k[0] == "--speculative-config")
    assert '"num_speculative_tokens":5' in spec[1]
    assert "features.spec_decoding.modes.mtp.hardware_overrides.rtx_pro_6000" in sources[spec]


def test_long_context_env_is_emitted():
    plan = servekit.Catalog.load().plan("Qwen/Qwen3.8-27B", hardware="b200", enable=["long_context"])
    assert plan.processes[0].env_map().get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") == "1"


def test_reference_catalog_through_the_environment_variable(reference_catalog, monkeypatch):
    monkeypatch.setenv("SERVEKIT_CATALOG", str(reference_catalog))
    catalog = servekit.Catalog.load()
    assert catalog.root == reference_catalog
    assert len(catalog.recipes) > 100


def test_unknown_choices_are_user_errors():
    catalog = servekit.Catalog.load()
    with pytest.raises(SelectionError, match="unknown recipe"):
        catalog.plan("nobody/nothing")
    with pytest.raises(SelectionError, match="hardware"):
        catalog.plan("Qwen/Qwen3.8-27B", hardware="abacus")


def test_missing_catalog_directory_is_a_catalog_error(tmp_path):
    with pytest.raises(CatalogError, match="does not exist"):
        servekit.Catalog.load(tmp_path / "nowhere")


def test_validate_on_load_reports_file_and_line(tmp_path, reference_catalog):
    import shutil

    root = tmp_path / "cat"
    shutil.copytree(reference_catalog, root)
    broken = root / "models" / "Qwen" / "Qwen3-8B.yaml"
    broken.write_text("meta:\n  title: x\nvariants: [\n")
    with pytest.raises(CatalogError) as info:
        servekit.Catalog.load(root, validate=True)
    assert info.value.location.file == str(broken)
    assert info.value.location.line is not None


def test_validate_on_load_names_the_broken_file_not_its_knock_on_effects(tmp_path, reference_catalog):
    import shutil

    root = tmp_path / "cat"
    shutil.copytree(reference_catalog, root)
    broken = root / "strategies" / "single_node_tp.yaml"
    broken.write_text("name: single_node_tp\ndeploy_type: [\n")
    with pytest.raises(CatalogError) as info:
        servekit.Catalog.load(root, validate=True)
    assert info.value.location.file == str(broken)
    assert "malformed YAML" in str(info.value)


def test_plan_on_a_misshapen_recipe_raises_the_validators_catalog_error(tmp_path, reference_catalog):
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(reference_catalog, root)
    recipe = root / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    recipe.write_text(recipe.read_text(encoding="utf-8").replace("\nmodel:\n", "\nmodel: 5\nwas_model:\n"),
                      encoding="utf-8")
    catalog = servekit.Catalog.load(root)
    with pytest.raises(CatalogError) as info:
        catalog.plan("Qwen/Qwen3.8-27B")
    assert info.value.location.file == str(recipe) and "model" in info.value.location.key()


def _cli_json(capsys, *argv: str) -> dict:
    import json

    from servekit.cli.app import main

    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_fit_and_perf_return_what_the_commands_print(capsys):
    catalog = servekit.Catalog.load()
    fit = catalog.fit("Qwen/Qwen3.8-27B", hardware="h100", max_model_len="32k")
    assert fit == _cli_json(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--max-model-len", "32k")
    assert fit["fits"] and fit["report"]["kv_tokens"] > 0
    speed = catalog.perf("Qwen/Qwen3.8-27B", hardware="h100", input_len=512, output_len=256, concurrency=16)
    assert speed == _cli_json(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "512",
                              "--output-len", "256", "--concurrency", "16")
    assert speed["batch"] == 16 and speed["output_throughput_tok_s"] > 0


def test_fit_and_perf_refuse_bad_values_with_a_fix():
    catalog = servekit.Catalog.load()
    with pytest.raises(SelectionError, match="at least 1"):
        catalog.perf("Qwen/Qwen3.8-27B", hardware="h100", concurrency=0)
    with pytest.raises(SelectionError, match="both given"):
        catalog.perf("Qwen/Qwen3.8-27B", hardware="h100", concurrency=4, request_rate=2.0)
    with pytest.raises(SelectionError, match="between 0 and 1"):
        catalog.perf("Qwen/Qwen3.8-27B", hardware="h100", acceptance_rate=1.5)
    with pytest.raises(SelectionError, match="unknown hardware"):
        catalog.fit("Qwen/Qwen3.8-27B", hardware="no-such-gpu")


def test_fit_and_perf_take_the_launch_options_by_name():
    catalog = servekit.Catalog.load()
    one = catalog.perf("Qwen/Qwen3.8-27B", hardware="h200", variant="fp8", tp=1, concurrency=1)
    assert one["tp"] == 1 and one["weights_format"] == "fp8"
    with pytest.raises(TypeError, match="no_such_option"):
        catalog.fit("Qwen/Qwen3.8-27B", hardware="h100", no_such_option=1)
