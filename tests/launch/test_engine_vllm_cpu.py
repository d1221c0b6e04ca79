"""vLLM on this machine's CPU through ``servekit up --detach`` -> ``verify`` -> ``down``.

The tiny Llama's KV pool is predicted exactly: VLLM_CPU_KVCACHE_SPACE GiB / (layers x 2 x
kv_heads x head_dim x 2 bytes); the log must state the same number, whether the space was
given (``--kv-cache-space``) or set by ``up`` from its prediction.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from launch.engine_runs import none_alive, port_is_free, up_detached, use_engine, verify_json
from servekit.cli.app import main
from servekit.engines.registry import native_engine
from servekit.launch import records
from servekit.processes import exited
from testing.engines import engine_python
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

pytestmark = pytest.mark.engine

SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)
EXPECTED_KV_TOKENS = 1 * 1024**3 // (2 * 2 * 2 * 64 * 2)


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> Path:
    use_engine(native_engine().id, monkeypatch)
    return write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")


def test_up_verify_down_round_trip(tiny, capsys):
    started = up_detached(capsys, str(tiny), "--kv-cache-space", "1", "--max-model-len", "1024")
    try:
        code, doc, err = verify_json(capsys, started["run"])
        assert code == 0, (doc, err)
        assert doc["ok"] and doc["run"] == started["run"]
        assert {p["name"] for p in doc["probes"]} >= {"health", "models", "chat", "stream", "metrics"}
        assert doc["measured"]["kv_tokens"] == doc["predicted"]["kv_tokens"] == EXPECTED_KV_TOKENS
        assert Path(doc["evidence"]).is_file()
        command = records.load(started["run"]).processes[0].argv
        assert Path(command[0]).name == "vllm" and command[1] == "serve"  # the command users run
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
    assert port_is_free(started["url"])


def test_without_a_kv_cache_space_the_measured_pool_is_the_prediction(tiny, capsys):
    """``up`` sets VLLM_CPU_KVCACHE_SPACE to the pool it predicted, so vLLM's pool is the
    prediction whatever else holds memory here. ``--gpu-memory-utilization 0.15`` (the share
    of host memory vLLM's CPU backend may use) keeps that pool small on a machine shared with
    other test runs; the KV space itself is left to ``up``."""
    started = up_detached(capsys, str(tiny), "--max-model-len", "1024", "--arg=--gpu-memory-utilization=0.15")
    try:
        space = records.load(started["run"]).processes[0].env.get(native_engine().launch.kv_space_env)
        assert space is not None and int(space) >= 1
        code, doc, err = verify_json(capsys, started["run"])
        assert code == 0, (doc, err)
        assert doc["measured"]["kv_tokens"] == doc["predicted"]["kv_tokens"] == int(space) * EXPECTED_KV_TOKENS
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])


def test_a_server_killed_after_up_fails_verify_and_down_still_cleans_up(tiny, capsys):
    # killed before verify starts, not on a timer during it: a tiny model answers every probe in
    # well under a second, so a timed kill raced the probes and sometimes came after them
    started = up_detached(capsys, str(tiny), "--kv-cache-space", "1", "--max-model-len", "1024")
    try:
        os.killpg(started["pids"][0], signal.SIGKILL)
        assert _gone(started["pids"][0])
        code, doc, err = verify_json(capsys, started["run"])
        assert code == 1
        assert not doc["ok"]
        assert "log tail" in err and doc["log_tail"]
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
    assert port_is_free(started["url"])


def _gone(pid: int, timeout_s: float = 30.0) -> bool:
    """Whether the killed process has exited within the timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if exited(pid) is not None:
            return True
        time.sleep(0.1)
    return False


def test_the_vllm_command_itself_works_in_the_cpu_environment():
    vllm = Path(engine_python(native_engine().install.requirement)).parent / "vllm"
    version = subprocess.run([str(vllm), "--version"], capture_output=True, text=True, timeout=300)
    assert version.returncode == 0, version.stderr[-2000:]
    assert version.stdout.strip().splitlines()[-1].split("+")[0] == "0.32.0"
    helped = subprocess.run([str(vllm), "serve", "--help"], capture_output=True, text=True, timeout=300)
    assert helped.returncode == 0, helped.stderr[-2000:]
    assert "usage: vllm serve" in helped.stdout
