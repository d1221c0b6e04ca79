"""Prefill and decode vLLM CPU servers behind vllm-router on this machine, through the normal
pipeline (a test catalog's prefill/decode strategy for a CPU profile): ``up --detach`` ->
``verify`` through the router's URL -> ``down``.

No KV connector works on this machine's CPU, so the plan has none: the router still splits each
request (a one-token prefill on the prefill server, then the decode server), and the decode
server, which receives no KV cache, recomputes the prompt. The prefill server's log shows that
it got the router's transfer parameters and had no connector to use them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from launch.engine_runs import none_alive, port_is_free, up_detached, use_engine, verify_json
from launch.pd_catalog import HARDWARE, RECIPE_ID, pd_catalog
from servekit.cli.app import main
from servekit.engines.companions import program_of
from servekit.engines.registry import native_engine
from servekit.launch import records
from testing.engines import engine_python
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

pytestmark = pytest.mark.engine

SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)
EXPECTED_KV_TOKENS = 1 * 1024**3 // (2 * 2 * 2 * 64 * 2)
NO_CONNECTOR = "Got kv_transfer_params, but no KVConnector found"


def test_prefill_and_decode_behind_the_router_up_verify_down(tmp_path, monkeypatch, capsys):
    use_engine(native_engine().id, monkeypatch)
    engine_python(program_of("vllm-router").spec())  # skips, naming the install script, when it is missing
    model = write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")
    catalog = pd_catalog(tmp_path / "catalog", model, max_model_len=1024, kv_space=1)
    started = up_detached(capsys, RECIPE_ID, "--catalog", str(catalog), "--hardware", HARDWARE)
    record = records.load(started["run"])
    try:
        assert [(p.role, p.kind) for p in record.processes] == [
            ("prefill", "engine"), ("decode", "engine"), ("router", "router")]
        assert started["url"] == record.process("router").url
        assert Path(record.process("router").argv[0]).name == "vllm-router"
        code, doc, err = verify_json(capsys, started["run"])
        assert code == 0, (doc, err)
        assert doc["ok"] and doc["url"] == started["url"]
        assert {p["name"] for p in doc["probes"]} >= {"health", "models", "chat", "stream", "metrics", "processes"}
        assert doc["measured"]["kv_tokens"] == doc["predicted"]["kv_tokens"] == EXPECTED_KV_TOKENS
        assert NO_CONNECTOR in Path(record.process("prefill").log).read_text(encoding="utf-8", errors="replace")
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
    assert all(port_is_free(p.url) for p in record.processes)
