"""MAX on this machine's CPU through ``servekit up --detach`` -> ``verify`` -> ``down``.

MAX compiles the model at its first start (minutes cold on a small CPU; seconds once its
compile cache is warm). The KV pool it logs equals fit's prediction by the engine's CPU rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from launch.engine_runs import none_alive, port_is_free, up_detached, use_engine, verify_json
from servekit.cli.app import main
from testing.tiny_model import write_tiny_llama

pytestmark = pytest.mark.engine

ENGINE = "max"


def test_up_verify_down_round_trip(tmp_path, monkeypatch, capsys):
    use_engine(ENGINE, monkeypatch)
    model = write_tiny_llama(tmp_path / "tiny", dtype="float32")
    started = up_detached(capsys, str(model), "--engine", ENGINE, "--max-model-len", "512",
                          "--arg=--dtype", "--arg=float32")
    try:
        code, doc, err = verify_json(capsys, started["run"])
        assert code == 0, (doc, err)
        assert {p["name"] for p in doc["probes"]} >= {"health", "models", "chat", "stream", "metrics"}
        # on a CPU MAX sizes its pool for one request of --max-model-len in whole pages plus the
        # null page: (512 / 128 + 1) x 128 tokens
        assert doc["measured"]["kv_tokens"] == doc["predicted"]["kv_tokens"] == (512 // 128 + 1) * 128
        assert Path(doc["evidence"]).is_file()
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
    assert port_is_free(started["url"])
