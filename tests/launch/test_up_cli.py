"""``servekit up`` before anything starts: local-model plans, pre-launch refusal, dry runs."""

from __future__ import annotations

import json

import psutil

from servekit.cli.app import main
from servekit.launch import records
from servekit.launch.local_model import LocalOptions, features_of, local_model_plan
from servekit.launch.launch_plan import plan_from_dict, plan_hash
from testing.tiny_model import write_tiny_llama


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_a_local_model_directory_is_a_plan(tmp_path):
    model = write_tiny_llama(tmp_path / "tiny")
    plan = local_model_plan(str(model), "vllm", LocalOptions(max_model_len=512, env={"A": "1"}))
    assert plan.served_name == "tiny"
    assert plan.server.argv == ("vllm", "serve", str(model), "--served-model-name", "tiny", "--max-model-len", "512")
    assert plan_from_dict(plan.to_dict()) == plan
    assert plan_hash(plan) == plan_hash(plan_from_dict(plan.to_dict()))


def test_features_come_from_the_options():
    assert features_of(["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--reasoning-parser=qwen3"]) \
        == ("tool_calling", "reasoning")


def test_a_plan_that_fails_lint_refuses_to_start_and_spawns_nothing(tmp_path, capsys):
    model = write_tiny_llama(tmp_path / "tiny")
    before = _children()
    code = main(["up", str(model), "--arg=--max-model-lenx", "--arg=5", "--detach"])
    err = capsys.readouterr().err
    assert code == 1
    assert "nothing was started" in err and "--max-model-lenx" in err and "did you mean --max-model-len" in err
    assert records.list_ids() == []
    assert _children() == before


def test_dry_run_prints_the_exact_command(tmp_path, capsys):
    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["up", str(model), "--dry-run", "--kv-cache-space", "1", "--max-model-len", "256"]) == 0
    out = capsys.readouterr().out
    assert f"VLLM_CPU_KVCACHE_SPACE=1 vllm serve {model} --served-model-name tiny --max-model-len 256" in out
    assert records.list_ids() == []


def test_dry_run_json_carries_the_plan_and_checks(tmp_path, capsys):
    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["up", str(model), "--dry-run", "--format", "json", "--engine", "max"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["checks"]["ok"] is True
    assert doc["plan"]["processes"][0]["argv"][:2] == ["max", "serve"]


def test_docker_dry_run_for_qaic_and_ascend(capsys):
    assert main(["up", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "ai100_ultra", "--engine", "qaic",
                 "--docker", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "docker run --device /dev/accel/accel0" in out and "ghcr.io/quic/cloud_ai_inference_vllm" in out
    assert main(["up", "Qwen/Qwen3.8-27B", "--hardware", "ascend_950pr", "--variant", "ascend_w8a8",
                 "--engine", "ascend", "--docker", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "docker run --device /dev/davinci0" in out and "quay.io/ascend/vllm-ascend" in out


def test_up_of_other_hardware_without_dry_run_says_how(capsys, monkeypatch):
    # no Docker engine behind the CLI (none runs on this machine; the socket makes sure of it)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    code = main(["up", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--docker"])
    assert code == 1
    assert "--docker --dry-run" in capsys.readouterr().err
    code = main(["up", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100"])
    assert code == 1
    assert "is not this machine" in capsys.readouterr().err


def test_a_port_is_free_once_its_listener_is_gone():
    import socket

    from servekit.processes import port_free

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_free("127.0.0.1", port)
    assert port_free("127.0.0.1", port)
