"""``servekit perf MODEL --hardware local`` on a CPU machine: this machine's measured row (seeded
here with stated figures: the probe itself needs the engine environment's torch, which the engine
test ``tests/launch/test_engine_vllm_cpu_bench.py`` runs) and the CPU backend's constants."""

from __future__ import annotations

import json

import pytest

from servekit.app.local_hardware import this_machine
from servekit.cli.app import main
from servekit.perf import local_cpu
from servekit.perf.constants import CPU_KEY
from servekit.perf.intervals import CPU_INTERVAL80, interval_source
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

FIGURES = {"memory_gb_s": 20.0, "bf16_tflops": 0.25, "threads": 2, "torch": "stated"}


@pytest.fixture
def cpu_machine():
    machine = this_machine()
    if machine.gpus:
        pytest.skip("this machine has GPUs: hardware local is their taxonomy entry, not a measured CPU")
    local_cpu.cpu_speed(f"this machine ({machine.cpu_model})", lambda: dict(FIGURES))


def test_perf_for_hardware_local_uses_the_measured_cpu(cpu_machine, tmp_path, capsys):
    model = write_tiny_llama(tmp_path / "tiny", shape=TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2,
                                                                      head_dim=64), dtype="bfloat16")
    code = main(["perf", str(model), "--hardware", "local", "--max-model-len", "1024", "--input-len", "256",
                 "--output-len", "128", "--concurrency", "4", "--format", "json"])
    out = capsys.readouterr()
    assert code in (0, None), out.err
    doc = json.loads(out.out)
    assert doc["hardware"] == "local" and doc["max_num_seqs"] == 128 and doc["max_num_batched_tokens"] == 2048
    assert doc["batch"] == 4 and doc["tpot_ms"]["median"] > 0
    lo, hi = doc["interval80"]["tpot_ms"]["median"]
    assert lo < doc["tpot_ms"]["median"] < hi
    # the CPU backend's own intervals (its held-out loads), not those of the GPU points
    assert doc["interval80_source"] == interval_source(CPU_KEY)
    for key, (low, high) in CPU_INTERVAL80.items():
        metric, _, stat = key.partition(".")
        stat = stat or "median"
        band = doc["interval80"][metric] if metric == "output_throughput_tok_s" else doc["interval80"][metric][stat]
        value = doc[metric] if metric == "output_throughput_tok_s" else doc[metric][stat]
        assert band == pytest.approx([value * low, value * high], abs=2e-3)
    # the p99 figures take their own ratios (the loads' p99s), not the medians'
    assert {"ttft_ms.p99", "tpot_ms.p99"} <= set(CPU_INTERVAL80)
    assert CPU_INTERVAL80["ttft_ms.p99"] != CPU_INTERVAL80["ttft_ms"]
