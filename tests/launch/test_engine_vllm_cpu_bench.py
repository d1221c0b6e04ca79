"""``servekit bench`` against a real vLLM CPU server started by ``servekit up``: the real
``vllm bench serve`` of the engine environment, this machine's CPU measured by the real probe,
and the load's figures against the ``servekit perf`` prediction, recorded as evidence.

The model is the calibration model of the CPU constants (``servekit.perf.constants.CPU_CALIBRATION``:
a 4-layer Llama of hidden size 1024, 52M parameters); the workload (256:128 at concurrency 4) is
none of the calibration workloads (128:64 at 1 and 16, 512:32 at 2): the run tested here is not
one the constants were fitted on. (The 2-layer, hidden-256 Llama of the other engine tests makes a
token in well under a millisecond, faster than the API server streams on two CPUs: the client
then sees tokens in bursts and a median TPOT near 0 ms, a figure of the client, not the engine.)
The figures are timings on a CPU the server, the load and anything else running share; the
evidence keeps the load averages beside them, and ``bench`` measures the CPU again just before
the load, so the prediction carries that load too.

The server runs with prefix caching off, as the calibration's did: the speed model prefills every
prompt token, and the random prompts of this model's 320-token vocabulary share long prefixes
(with caching on, the server logged a prefix cache hit rate of 45-52% during this load, and the
median TTFT fell to half the prediction).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launch.engine_runs import none_alive, up_detached, use_engine
from servekit.cli.app import main
from servekit.engines.registry import native_engine
from servekit.launch.evidence import read_evidence
from servekit.perf.local_cpu import cache_file
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

pytestmark = pytest.mark.engine

SHAPE = TinyLlamaShape(layers=4, hidden=1024, heads=8, kv_heads=8, head_dim=128, intermediate=2816)
WORKLOAD = ["--input-len", "256", "--output-len", "128", "--concurrency", "4", "--num-prompts", "40"]


@pytest.fixture
def small(tmp_path, monkeypatch) -> Path:
    use_engine(native_engine().id, monkeypatch)
    return write_tiny_llama(tmp_path / "small", shape=SHAPE, dtype="bfloat16")


def _table(doc: dict) -> str:
    return "\n".join(f"{name}: measured {row['measured']}, predicted {row['predicted']}, interval "
                     f"{row['interval80']}, inside {row['inside']}" for name, row in doc["compared"].items())


def test_bench_of_a_small_up_run_lands_inside_its_predicted_throughput_and_tpot_intervals(small, capsys):
    started = up_detached(capsys, str(small), "--kv-cache-space", "1", "--max-model-len", "1024",
                          "--arg=--no-enable-prefix-caching")
    try:
        code = main(["bench", started["run"], *WORKLOAD, "--format", "json"])
        captured = capsys.readouterr()
        assert code == 0, captured.err[-4000:]
        doc = json.loads(captured.out)
        assert doc["measured"]["completed"] == 40 and doc["measured"]["failed"] == 0
        assert doc["measured"]["total_output_tokens"] == 40 * 128  # --ignore-eos: every request runs to its end
        figures = json.loads(cache_file().read_text())["figures"]
        assert figures["memory_gb_s"] > 0 and figures["bf16_tflops"] > 0
        ledger = read_evidence(Path(doc["evidence"]))
        assert ledger["kind"] == "bench" and ledger["run"] == started["run"] and ledger["compared"] == doc["compared"]
        assert Path(ledger["tool"]["result"]).is_file()
        # the server's prefix-cache counters were read around the load (caching off: nothing looked up, nothing hit)
        assert doc["prefix_cache"]["hit_tokens"] == 0 and ledger["prefix_cache"] == doc["prefix_cache"]
        assert doc["binding"] == doc["predicted"]["binding"]
        # Asserted inside the 80% intervals: output throughput and median TPOT. The load's
        # fixed-length requests run in waves (servekit.perf.predict: one prefill step of the four
        # prompts, then decode steps of four), and the CPU was measured just before the load on the
        # CPU vLLM binds its worker to, so the prediction carries whatever else runs on the machine
        # (bench/results/cpu-overheads-2026-12-04.txt); the decode steps these figures rest on read
        # weights and KV, which the probe streams through the server's own linear kernel at the
        # model's size on any CPU (servekit.perf.cpu_probe).
        # Median TTFT is compared and recorded, and asserted only within a factor of 4: it rests on
        # the prefill's arithmetic, at the share of the probe's BF16 FLOP/s fitted on one CPU
        # (CPU_CALIBRATION), and that share does not carry to every CPU: on an Intel Xeon whose
        # probe measured 0.78-0.86 TFLOPS on one CPU, two runs measured 379 ms against 158-172
        # predicted (bench/results/README.md). The p99 figures are compared and recorded, not
        # asserted: no calibration point measures a tail, and on a shared machine a tail is a
        # moment of load.
        speed = ledger["cpu_speed"]["figures"]
        assert speed["threads"] == len(speed["cpus"]) >= 1 and speed["memory_gb_s"] > 0
        headline = ("output_throughput_tok_s", "tpot_ms.median")
        missed = [name for name in headline if not doc["compared"][name]["inside"]]
        assert not missed, f"the prediction misses {missed} (load averages {doc['machine_load']}):\n{_table(doc)}"
        ttft = doc["compared"]["ttft_ms.median"]
        assert 0.25 < ttft["measured"] / ttft["predicted"] < 4, _table(doc)
        for name in ("ttft_ms.p99", "tpot_ms.p99"):
            row = doc["compared"][name]
            assert row["measured"] > 0 and row["predicted"] > 0
            assert isinstance(row["inside"], bool) and row["interval80"][0] < row["predicted"] < row["interval80"][1]
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
