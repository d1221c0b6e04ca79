"""``servekit warm-cache`` end to end through the CLI entry point."""

from __future__ import annotations

import json

import pytest
from warm_repos import DRAFT, MODEL

from servekit.cli.app import main

SEED_RECIPE = ["Qwen/Qwen3.8-27B", "--feature", "spec_decoding", "--mode", "spec_decoding=dflash"]


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("offline_switch", ["closed-port", "HF_HUB_OFFLINE"])
def test_seed_recipe_dry_run_lists_model_and_dflash_draft_without_network(
    capsys, monkeypatch, reference_catalog, offline_switch
):
    if offline_switch == "HF_HUB_OFFLINE":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    code = main(["warm-cache", *SEED_RECIPE, "--dry-run", "--format", "json", "--catalog", str(reference_catalog)])
    doc = _json(capsys)
    assert code == 0 and doc["dry_run"]
    repos = {r["repo_id"]: r for r in doc["repos"]}
    assert list(repos) == ["Qwen/Qwen3.8-27B", "incoai/Qwen3.8-27B-DFlash2"]
    assert repos["incoai/Qwen3.8-27B-DFlash2"]["role"] == "draft"
    for repo in repos.values():
        assert "*.safetensors" in repo["allow_patterns"] and repo["ignore_patterns"] == ["*/*"]
        assert "files" not in repo  # patterns only: the hub could not list the repo
    (step,) = doc["steps"]
    assert (step["engine"], step["status"]) == ("vllm", "skipped") and step["reason"].startswith("dry run")


def test_dspark_mode_names_its_drafter(capsys, monkeypatch, reference_catalog):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code = main(
        [
            "warm-cache",
            "Qwen/Qwen3.8-27B",
            "--feature",
            "spec_decoding",
            "--mode",
            "spec_decoding=dspark",
            "--dry-run",
            "--format",
            "json",
            "--catalog",
            str(reference_catalog),
        ]
    )
    assert code == 0
    assert [r["repo_id"] for r in _json(capsys)["repos"]] == [
        "Qwen/Qwen3.8-27B",
        "RedHatAI/Qwen3.8-27B-speculator.dspark",
    ]


def _command() -> str:
    return f'vllm serve {MODEL} --speculative-config \'{{"method":"dflash","model":"{DRAFT}"}}\''


def test_command_dry_run_with_a_hub_lists_files_and_bytes(capsys, monkeypatch, hub):
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    assert main(["warm-cache", "--command", _command(), "--dry-run", "--format", "json"]) == 0
    doc = _json(capsys)
    model = doc["repos"][0]
    assert model["repo_id"] == MODEL and model["bytes"] == sum(f["size"] for f in model["files"]) > 0
    assert doc["bytes"] == doc["bytes_to_download"]


def test_command_warm_then_offline_check_then_missing_exits_1(capsys, monkeypatch, hub, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    assert main(["warm-cache", "--command", _command(), "--skip-precompile", "--format", "json"]) == 0
    doc = _json(capsys)
    assert doc["ok"] and doc["bytes_downloaded"] == doc["bytes"]

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["warm-cache", "--command", _command(), "--skip-precompile"]) == 0
    assert "verified" in capsys.readouterr().out

    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    assert main(["warm-cache", "--command", _command(), "--skip-precompile"]) == 1
    captured = capsys.readouterr()
    assert f"{MODEL}@main: not in the cache" in captured.out and f"{DRAFT}@main: not in the cache" in captured.out
    assert "HF_HUB_OFFLINE is set" in captured.err


def test_bad_mode_is_one_line_error(capsys, reference_catalog):
    assert main(["warm-cache", "Qwen/Qwen3.8-27B", "--mode", "dflash", "--catalog", str(reference_catalog)]) == 1
    assert "FEATURE=MODE" in capsys.readouterr().err


def test_seed_recipe_dry_run_with_a_hub_lists_files_and_bytes(capsys, monkeypatch, reference_catalog, repo_folders):
    """The seed's repo ids served by the loopback hub (tiny stand-in contents)."""
    from testing.hub_server import HubServer

    with HubServer() as hub:
        hub.add_repo("Qwen/Qwen3.8-27B", repo_folders[MODEL])
        hub.add_repo("incoai/Qwen3.8-27B-DFlash2", repo_folders[DRAFT])
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        code = main(["warm-cache", *SEED_RECIPE, "--dry-run", "--format", "json", "--catalog", str(reference_catalog)])
    doc = _json(capsys)
    assert code == 0 and doc["offline"] is None
    model, draft = doc["repos"]
    assert model["repo_id"] == "Qwen/Qwen3.8-27B" and draft["repo_id"] == "incoai/Qwen3.8-27B-DFlash2"
    assert "model-00001-of-00002.safetensors" in {f["path"] for f in model["files"]}
    assert draft["files"] and doc["bytes"] == model["bytes"] + draft["bytes"] > 0


def test_a_local_model_path_that_does_not_exist_is_missing(capsys, tmp_path):
    gone = tmp_path / "no-such-model"
    code = main(["warm-cache", "--command", f"vllm serve {gone}", "--skip-precompile", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["missing"] == [f"{gone}: local path does not exist"]
    there = tmp_path / "model"
    there.mkdir()
    assert main(["warm-cache", "--command", f"vllm serve {there}", "--skip-precompile"]) == 0


def test_a_local_model_directory_is_warmed_like_plan_takes_it(capsys, tmp_path):
    from testing.tiny_model import write_tiny_llama

    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["plan", str(model)]) == 0  # plan takes the directory ...
    capsys.readouterr()
    code = main(["warm-cache", str(model), "--dry-run", "--format", "json"])  # ... and so does warm-cache
    doc = _json(capsys)
    assert code == 0
    (repo,) = doc["repos"]
    assert repo["repo_id"] == str(model) and repo["local"] is True
    assert doc["bytes"] == 0  # nothing to download
    code = main(["warm-cache", str(model), "--skip-precompile", "--format", "json"])
    doc = _json(capsys)
    assert code == 0 and doc["missing"] == [] and doc["ok"]
