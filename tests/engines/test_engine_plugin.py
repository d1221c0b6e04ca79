"""An engine package defined in the tests (testing.toy_engine) works end to end once registered:
``servekit plan --engine toy``, ``servekit lint``, translation and warm-cache's pre-compile, with
no other file changed."""

from __future__ import annotations

import json

import pytest
from testing.toy_engine import ENGINE as TOY

from servekit.cli.app import main
from servekit.engines.lint import lint_argv
from servekit.engines.plan_translate import dialect_names
from servekit.engines.registry import engine_for_argv, engine_names, get_engine, registered
from servekit.errors import ServekitError
from servekit.warm.artifacts import artifacts_from_argv
from servekit.warm.engine_steps import EngineTarget, StepContext, planned, precompile
from servekit.warm.hub import HubSettings


@pytest.fixture()
def toy():
    with registered(TOY) as engine:
        yield engine


def test_registration_is_undone_after_the_block():
    with registered(TOY):
        assert get_engine("toy") is TOY and get_engine("toy-engine") is TOY and "toy" in engine_names()
    assert "toy" not in engine_names()
    with pytest.raises(ServekitError, match="unknown engine 'toy'"):
        get_engine("toy")


def test_plan_in_the_toy_engine_form(toy, capsys):
    code = main(["plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--engine", "toy", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["engine"] == "toy" and doc["argv"][:4] == ["toy", "run", "--model", "Qwen/Qwen3.8-27B"]
    assert "toy_port" in doc  # the engine's own key, from Engine.plan_fields
    assert doc["untranslated"] and all(item["reason"] == "toy has no such option" for item in doc["untranslated"])
    assert doc["servekit"]["engine_commands"][0]["engine"] == "toy"
    assert "toy" in dialect_names()


def test_lint_guesses_the_toy_engine_from_its_program(toy, capsys):
    assert engine_for_argv(["toy", "run", "--model", "m"]) is toy
    assert main(["lint", "--", "toy", "run", "--model", "m", "--context", "4096"]) == 0
    assert "toy 1.0: valid" in capsys.readouterr().out
    bad = lint_argv("toy", None, ["toy", "run", "--context", "many", "--colour", "red"])
    assert {f.code for f in bad.findings} >= {"bad-type", "unknown-option", "toy.no-model"}


def test_translation_and_warm_cache_ask_the_engine(toy, tmp_path):
    launch = toy.translate(["vllm", "serve", "org/m", "--max-model-len", "2048", "--seed", "1"])
    assert launch.argv == ("toy", "run", "--model", "org/m", "--context", "2048")
    assert [u.flag for u in launch.untranslated] == ["--seed"]
    assert [a.repo_id for a in artifacts_from_argv(list(launch.argv), "toy")] == ["org/m"]
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=True)
    target = EngineTarget("toy", ("vllm", "serve", "org/m"))
    (step,) = precompile([target], StepContext(settings))
    assert step.status == "skipped" and step.reason == "toy compiles nothing"
    assert planned([target])[0].reason == "dry run: nothing to compile"
