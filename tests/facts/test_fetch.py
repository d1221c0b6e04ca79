"""Model facts fetched through huggingface_hub from a loopback hub, then read offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testing.hub_server import HubServer
from testing.model_configs import DENSE_GQA, dense_tensors, write_config_dir, write_header_only
from testing.tiny_model import write_tiny_llama

from servekit.app.checks import has_facts, known_facts
from servekit.cli.app import main
from servekit.facts.fetch import fetch_facts
from servekit.facts.header_cache import header_cache_file
from servekit.facts.locate import facts_from_path_or_cache
from servekit.facts.missing import FactsMissingError, missing_facts
from servekit.facts.safetensors import checkpoint_weight_bytes

REPO = "org/tiny"
DENSE = "org/dense-8b"


@pytest.fixture()
def hub(tmp_path, monkeypatch):
    tiny = write_tiny_llama(tmp_path / "tiny", shards=2)
    dense = write_config_dir(tmp_path / "dense", DENSE_GQA)
    write_header_only(dense / "model.safetensors", dense_tensors(DENSE_GQA))
    with HubServer() as server:
        server.add_repo(REPO, tiny)
        server.add_repo(DENSE, dense)
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        yield server


def test_facts_are_fetched_with_range_requests_and_read_offline(hub, tmp_path, monkeypatch):
    fetched = fetch_facts(REPO)
    assert (fetched.snapshot / "config.json").is_file() and len(fetched.shards) == 2
    assert fetched.headers_file == header_cache_file(REPO, fetched.commit) and fetched.headers_file.is_file()
    shard_gets = [r for r in hub.downloads(REPO) if r.path.endswith(".safetensors")]
    assert shard_gets and all(r.range and r.range.startswith("bytes=0-") for r in shard_gets)
    assert not list(fetched.snapshot.glob("*.safetensors"))  # no weight was downloaded
    hub.stop()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    facts = facts_from_path_or_cache(REPO)
    assert facts.weights == checkpoint_weight_bytes(tmp_path / "tiny", facts.num_layers)
    assert missing_facts(REPO) == [] and has_facts(REPO) and known_facts(REPO).model_id == REPO


def test_plan_reads_fetched_facts_offline(hub, capsys, monkeypatch):
    assert main(["plan", DENSE, "--hardware", "h100"]) == 1
    err = capsys.readouterr().err
    assert "unknown recipe" in err and f"`servekit facts fetch {DENSE}`" in err
    assert main(["facts", "fetch", DENSE]) == 0
    capsys.readouterr()
    hub.stop()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["plan", DENSE, "--hardware", "h100", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["argv"][:3] == ["vllm", "serve", DENSE]
    facts = doc["servekit"]["checks"]["facts"]
    assert facts["weights_exact"] and facts["weights_basis"] == "safetensors headers" and facts["missing"] == []


def test_a_hub_url_plans_its_repo_at_its_revision(hub, capsys):
    commit = hub.repos[DENSE].commit
    url = f"https://huggingface.co/{DENSE}/tree/{commit}"
    assert main(["facts", "fetch", url]) == 0
    capsys.readouterr()
    assert main(["plan", f"https://huggingface.co/{DENSE}", "--hardware", "h100"]) == 1  # main was not fetched
    assert f"servekit facts fetch {DENSE}`" in capsys.readouterr().err
    assert main(["facts", "fetch", f"https://huggingface.co/{DENSE}"]) == 0
    capsys.readouterr()
    assert main(["plan", f"https://huggingface.co/{DENSE}", "--hardware", "h100", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["argv"][2] == DENSE
    assert main(["plan", url, "--hardware", "h100", "--format", "json"]) == 0
    argv = json.loads(capsys.readouterr().out)["argv"]
    assert argv[2] == DENSE and argv[3:5] == ["--revision", commit]


def test_offline_the_message_lists_what_is_missing(hub, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FactsMissingError, match="config.json, safetensors headers"):
        fetch_facts(REPO)
    assert main(["facts", "fetch", DENSE, "--format", "json"]) == 1
    err = capsys.readouterr()
    assert "offline mode is on" in err.err and "config.json, safetensors headers" in err.err
    assert f"servekit facts fetch {DENSE}" in err.err and json.loads(err.out)["fix"]
    assert main(["plan", DENSE, "--hardware", "h100", "--format", "json"]) == 1
    err = capsys.readouterr()
    assert "missing: config.json, safetensors headers" in err.err and f"servekit facts fetch {DENSE}" in err.err


def test_with_the_server_stopped_the_message_lists_what_is_missing(hub, capsys):
    hub.stop()
    assert main(["facts", "fetch", REPO]) == 1
    err = capsys.readouterr().err
    assert "cannot be reached" in err and "config.json, safetensors headers" in err
    assert f"servekit facts fetch {REPO}" in err


def test_headers_missing_from_the_cache_are_estimated_and_named(hub, capsys, monkeypatch):
    fetched = fetch_facts(DENSE)
    fetched.headers_file.unlink()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["plan", DENSE, "--hardware", "h100", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["servekit"]["checks"]["facts"]["missing"] == ["safetensors headers"]
    assert doc["servekit"]["checks"]["facts"]["weights_basis"] == "estimated from config.json"
    assert any(f"servekit facts fetch {DENSE}" in note for note in doc["servekit"]["notes"])


def test_facts_fetch_command(hub, capsys):
    assert main(["facts", "fetch", REPO]) == 0
    out = capsys.readouterr().out
    assert f"{REPO} @ " in out and "2 safetensors header(s)" in out and "LlamaForCausalLM" in out
    assert main(["facts", "fetch", DENSE, "--format", "json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["repo_id"] == DENSE and summary["safetensors_shards"] == 1 and summary["weights_bytes"] > 14 * 2**30
    assert main(["facts", "fetch", "org/absent"]) == 1
    assert "no model repository org/absent" in capsys.readouterr().err


def test_a_local_directory_needs_no_fetch(tmp_path: Path, capsys):
    folder = write_config_dir(tmp_path / "m", DENSE_GQA)
    assert main(["facts", "fetch", str(folder)]) == 1
    assert "needs no fetch" in capsys.readouterr().err


def test_a_recipe_plan_without_facts_says_how_to_fetch_them(capsys):
    from servekit.app.checks import plan_checks
    from servekit.app.plan import plan
    from servekit.app.request import PlanRequest
    from servekit.synthesis.plan import Plan

    result = plan(PlanRequest("meta-llama/Llama-3.1-8B-Instruct", hardware="h100", checks=False))
    other = Plan(**{**result.plan.__dict__, "model_id": "nobody/unfetched"})
    checks = plan_checks(None, other)
    assert checks["fit"] is None and "servekit facts fetch nobody/unfetched" in checks["note"]
    assert "missing: config.json, safetensors headers" in checks["note"]
