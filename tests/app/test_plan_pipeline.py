"""The one planning pipeline (servekit.app): every surface gets the same plan from it."""

from __future__ import annotations

import json

import pytest

import servekit
from servekit.app.batch import plan_request
from servekit.app.discovery import show_recipe
from servekit.app.plan import plan, plan_from_selection, synthesized
from servekit.app.plan_text import plan_lines
from servekit.app.plan_view import plan_payload
from servekit.app.request import EngineOptions, PlanRequest, find_model, load_documents, parse_devices
from servekit.app.warm import targets_from_plan
from servekit.cli.app import main
from servekit.engines.registry import engine_names, engines, native_engine
from servekit.errors import SelectionError, ServekitError
from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import selection_from_request

SEED = "Qwen/Qwen3.8-27B"


def _cli_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["plan", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_pipeline_payload_is_what_plan_prints(capsys):
    result = plan(PlanRequest(SEED, hardware="b200", features=("spec_decoding",)))
    assert (0, plan_payload(result)) == _cli_json(capsys, SEED, "--hardware", "b200", "--feature", "spec_decoding")
    assert result.checks is not None and result.commands is None and result.valid


def test_a_translated_plan_carries_engine_commands(capsys):
    other = next(e for e in engines() if e is not native_engine() and not e.single_process)
    request = PlanRequest("meta-llama/Llama-3.1-8B-Instruct", engine=other.id, checks=False)
    result = plan(request)
    assert result.commands and result.engine == other.id
    payload = plan_payload(result)
    assert payload["engine"] == other.id and "checks" not in payload["servekit"]
    code = 0 if result.valid else 1
    assert (code, payload) == _cli_json(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--engine", other.id, "--no-checks")
    assert any(line.startswith(f"# {other.id}") for line in plan_lines(result))


def test_an_engine_alias_plans_as_its_engine():
    aliased = next((e for e in engines() if e.aliases), None)
    if aliased is None:
        pytest.skip("no registered engine has an alias")
    result = plan(PlanRequest("meta-llama/Llama-3.1-8B-Instruct", engine=aliased.aliases[0], checks=False))
    assert result.engine == aliased.id


def test_unknown_engines_are_the_registry_error_listing_every_engine():
    with pytest.raises(ServekitError, match="unknown engine 'bogus'") as caught:
        plan(PlanRequest(SEED, engine="bogus"))
    assert all(name in str(caught.value.fix) for name in engine_names())


def test_a_checkpoint_id_finds_its_recipe_and_variant():
    docs = load_documents(None)
    recipe = docs.recipes[SEED]
    key, variant = next((k, v) for k, v in recipe["variants"].items() if v.get("model_id") not in (None, SEED))
    found_docs, recipe_id, found_variant = find_model(PlanRequest(variant["model_id"]))
    assert (recipe_id, found_variant) == (SEED, key) and SEED in found_docs.recipes
    with pytest.raises(SelectionError, match="unknown recipe 'nobody/nothing'"):
        find_model(PlanRequest("nobody/nothing", documents=docs))


def test_every_surface_finds_ids_in_any_case():
    """One matcher (``servekit.catalog.ids``) for the pipeline, batch, the Python API, warm-cache and show."""
    docs = load_documents(None)
    typed = SEED.swapcase()
    assert find_model(PlanRequest(typed))[1:] == (SEED, None)
    assert plan(PlanRequest(typed, hardware="h200", checks=False)).selection.recipe_id == SEED
    request = {"recipe": typed, "hardware": "h200", "strategy": "single_node_tp"}
    assert plan_request(docs, request) == plan_request(docs, {**request, "recipe": SEED})
    assert servekit.Catalog.load().select(typed, hardware="h200").recipe_id == SEED
    assert targets_from_plan(PlanRequest(typed, hardware="h200", checks=False)).description.startswith(SEED)
    assert show_recipe(docs, typed).id == SEED


def test_engine_options_parse_devices_once():
    assert EngineOptions(target="auto", qaic_mode="pyt", devices="0,1").as_options() == {
        "target": "auto", "mode": "pyt", "devices": [0, 1]}
    assert parse_devices("cpu") == "cpu"
    with pytest.raises(SelectionError, match="--devices expects ids"):
        EngineOptions(devices="x,y").as_options()


def test_batch_lines_are_the_pipeline_rendering():
    docs = load_documents(None)
    request = {"recipe": SEED, "hardware": "h200", "strategy": "single_node_tp"}
    selection = selection_from_request(docs, request)
    lean = plan_from_selection(docs, selection, lean=True, translate=False, checks=False)
    assert plan_request(docs, request) == render_plan(lean.plan)
    assert "unknown engine 'bogus'" in plan_request(docs, {**request, "engine": "bogus"})["error"]


@pytest.mark.parametrize("recipe_id", sorted(load_documents(None).recipes))
def test_a_batch_line_without_features_is_the_cli_plan(capsys, recipe_id):
    """No ``features``: the recipe's defaults, as ``servekit plan`` runs them; ``[]``: none."""
    code, cli = _cli_json(capsys, recipe_id, "--no-checks")
    assert code == 0
    docs = load_documents(None)
    line = {"recipe": recipe_id, "hardware": cli["hardware"], "variant": cli["variant"],
            "strategy": cli["strategy"], "node_count": cli["node_count"]}
    assert plan_request(docs, line)["argv"] == cli["argv"]
    bare = plan_request(docs, {**line, "features": []})
    feature_args = [a for block in docs.recipes[recipe_id].get("features", {}).values()
                    for a in (block or {}).get("args") or []]
    assert feature_args and not any(a in bare["argv"] for a in feature_args if str(a).startswith("--"))


def test_warm_targets_are_the_planned_processes_for_the_chosen_engine():
    other = next(name for name in engine_names() if name != native_engine().id)
    resolved = targets_from_plan(PlanRequest(SEED, hardware="h200", engine=other, checks=False))
    planned = plan(PlanRequest(SEED, hardware="h200", checks=False)).plan
    assert [t.argv for t in resolved.targets] == [tuple(str(w) for w in p.argv()) for p in planned.processes]
    assert {t.engine for t in resolved.targets} == {other}
    assert resolved.hardware == "h200" and resolved.description.startswith(f"{SEED} on h200")


def test_the_python_api_plans_through_the_pipeline():
    catalog = servekit.Catalog.load()
    assert type(catalog).__module__ == "servekit.app.catalog"
    via_api = catalog.plan(SEED, hardware="h200")
    assert via_api == synthesized(catalog.documents, catalog.select(SEED, hardware="h200"))
    with pytest.raises(ServekitError, match="unknown engine"):
        catalog.plan(SEED, engine="bogus")
