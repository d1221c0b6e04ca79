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
import statistics
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


def test_bench_of_a_small_up_run_measures_records_and_compares_against_its_prediction(small, capsys):
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
        # each request's own figures, from which the tool's percentiles come
        rows = ledger["requests"]
        assert len(rows) == 40 and all(r["ok"] and r["output_tokens"] == 128 for r in rows)
        assert min(r["start_s"] for r in rows) == 0.0
        assert statistics.median(r["ttft_ms"] for r in rows) == pytest.approx(doc["measured"]["ttft_ms"]["median"],
                                                                            abs=0.01)
        # a closed loop of fixed-length requests runs in waves: the slowest set against the median one
        spread = ledger["waves"]
        together = spread["ttft_ms_prefilled_together"]
        assert spread["waves"] >= 2 and together["fastest"] <= together["median"] <= together["slowest"]
        assert spread["slowest_over_median"] == pytest.approx(together["slowest"] / together["median"], abs=1e-3)
        # the server's prefix-cache counters were read around the load (caching off: nothing looked up, nothing hit)
        assert doc["prefix_cache"]["hit_tokens"] == 0 and ledger["prefix_cache"] == doc["prefix_cache"]
        assert doc["binding"] == doc["predicted"]["binding"]
        # What the load measured against the prediction, figure by figure: each interval holds its
        # prediction, each `inside` says whether the measurement lies in it, each ratio is
        # measured / predicted.
        speed = ledger["cpu_speed"]["figures"]
        assert speed["threads"] == len(speed["cpus"]) >= 1 and speed["memory_gb_s"] > 0
        # measured again after the load: how the machine moved while it ran
        assert ledger["cpu_speed_after"]["measured_at"] > ledger["cpu_speed"]["measured_at"]
        assert set(ledger["cpu_speed_change"]) == {"memory_gb_s", "bf16_tflops"}
        assert all(ratio > 0 for ratio in ledger["cpu_speed_change"].values())
        assert doc["predicted"]["interval80_source"].startswith("the CPU backend's loads")
        for name, row in doc["compared"].items():
            lo, hi = row["interval80"]
            assert row["measured"] > 0 and lo < row["predicted"] < hi, _table(doc)
            assert row["inside"] == (lo <= row["measured"] <= hi) and row["ratio"] == pytest.approx(
                row["measured"] / row["predicted"], rel=1e-3)
        # Whether one load lands inside an 80% interval is a frequency, not something one timed run
        # on a shared machine can assert: bench/bench_cpu_interval.py runs this load several times
        # and counts (bench/results/cpu-interval-*.txt). Asserted here is a gross-error bound that
        # a wrong term breaks (weights read twice or not at all, an overhead in the wrong unit: 2x
        # or more on the decode figures this load's steps rest on) and no hour of this machine has:
        # the CPU backend's held-out loads (bench/results/cpu-loads.jsonl) erred by at most 1.56x.
        # The median TTFT rests on the prefill's arithmetic at a share of the probe's BF16 FLOP/s
        # fitted on one CPU, which does not carry to every CPU (an Intel Xeon measured 2.4x,
        # bench/results/README.md): bounded by a factor of 4. The p99 figures are compared (against
        # ratios of their own, from the loads' p99s) and recorded, not bounded: a load's p99 is its
        # slowest wave, and how far that strays is this machine's jitter, which no rule predicts.
        bounds = {"output_throughput_tok_s": 2.0, "tpot_ms.median": 2.0, "ttft_ms.median": 4.0}
        off = {name: doc["compared"][name]["ratio"] for name, factor in bounds.items()
               if not 1 / factor < doc["compared"][name]["ratio"] < factor}
        assert not off, f"off by more than a gross-error bound {off} (load averages {doc['machine_load']}):\n{_table(doc)}"
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
