"""``servekit bench``'s load tool and ledger without a server: the ``vllm bench serve`` command it
builds, the result file it reads (fields, not the printed table), a failing tool, unknown and
stopped runs, and the evidence record's name. The load itself against a real vLLM CPU server is
the engine test ``tests/launch/test_engine_vllm_cpu_bench.py``."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.errors import ServekitError
from servekit.launch import records
from servekit.launch.bench_serve import (
    BenchToolError, bench_argv, parse_result, per_request, read_result, run_load, wave_spread, waves,
)
from servekit.perf.predict import Workload
from servekit.launch.evidence import read_evidence, write_evidence

RESULT = {  # the fields vllm bench serve 0.32.0 saved for a 40-prompt load of a tiny model (trimmed)
    "backend": "openai", "model_id": "tiny", "num_prompts": 40, "request_rate": "inf", "max_concurrency": 4,
    "duration": 2.6247587089999342, "completed": 40, "failed": 0, "total_input_tokens": 5150,
    "total_output_tokens": 2560, "request_throughput": 15.239496058378828, "output_throughput": 975.327747736245,
    "mean_ttft_ms": 28.564165225000693, "median_ttft_ms": 26.748252999993838, "p10_ttft_ms": 19.853010599945264,
    "p50_ttft_ms": 26.748252999993838, "p90_ttft_ms": 43.026296199980166, "p99_ttft_ms": 55.39677360003565,
    "mean_tpot_ms": 3.698002115476219, "median_tpot_ms": 3.554624309523595, "p99_tpot_ms": 6.675147529206351,
    "median_itl_ms": 2.692142499995498, "p99_itl_ms": 15.632879680060798,
}


def test_the_saved_result_is_read_field_by_field():
    got = parse_result(RESULT, "r.json")
    assert got.output_throughput_tok_s == pytest.approx(975.3277)
    assert got.ttft_ms == {"median": RESULT["median_ttft_ms"], "p99": RESULT["p99_ttft_ms"]}
    assert got.tpot_ms == {"median": RESULT["median_tpot_ms"], "p99": RESULT["p99_tpot_ms"]}
    assert (got.completed, got.failed, got.total_output_tokens) == (40, 0, 2560)


@pytest.mark.parametrize("key", ["output_throughput", "median_ttft_ms", "p99_tpot_ms", "duration"])
def test_a_result_without_a_figure_names_the_field(key):
    with pytest.raises(BenchToolError, match=f"r.json: the result has no number '{key}'"):
        parse_result({k: v for k, v in RESULT.items() if k != key}, "r.json")


def test_a_result_where_nothing_completed_is_an_error():
    with pytest.raises(BenchToolError, match="no request completed"):
        parse_result({**RESULT, "completed": 0, "failed": 40}, "r.json")


def test_a_result_file_that_is_not_an_object_is_an_error(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[1, 2]")
    with pytest.raises(BenchToolError, match="a JSON object was expected"):
        read_result(path)
    with pytest.raises(BenchToolError, match="left no result"):
        read_result(tmp_path / "missing.json")


def test_the_command_asks_for_a_closed_loop_or_a_rate_and_saves_its_result(tmp_path):
    result = tmp_path / "out" / "r.json"
    closed = bench_argv(Path("/env/bin/vllm"), "http://127.0.0.1:8000", "tiny", "/models/tiny",
                        Workload(128, 64, concurrency=4, num_prompts=40), result)
    assert closed[:3] == ["/env/bin/vllm", "bench", "serve"]
    assert shlex.split(shlex.join(closed)) == closed
    words = " ".join(closed)
    for part in ("--random-input-len 128", "--random-output-len 64", "--num-prompts 40", "--max-concurrency 4",
                 "--ignore-eos", "--save-result", "--save-detailed", f"--result-dir {result.parent}",
                 "--result-filename r.json",
                 "--model tiny", "--tokenizer /models/tiny", "--base-url http://127.0.0.1:8000"):
        assert part in words
    assert "--request-rate" not in words
    rate = bench_argv(Path("vllm"), "http://h:1", "m", "m", Workload(16, 16, request_rate=2.5), result, seed=7)
    assert "--request-rate 2.5" in " ".join(rate) and "--max-concurrency" not in rate
    assert "--seed 7" in " ".join(rate) and "--seed 0" in words
    assert "--num-warmups 8" in words and "--num-warmups 8" in " ".join(rate)  # two rounds of 4; 8 for a rate
    assert "--num-warmups 0" in " ".join(bench_argv(Path("vllm"), "u", "m", "m", Workload(1, 1, 2), result, warmups=0))


DETAILED = {  # the per-request lists --save-detailed adds (seconds; a failed request has zero times)
    "start_times": [100.25, 100.2, 100.3], "ttfts": [0.08, 0.21, 0.0], "latencies": [2.5, 2.6, 0.0],
    "input_lens": [256, 256, 256], "output_lens": [128, 128, 0], "errors": ["", "", "timed out"],
    "itls": [[0.02], [0.02], []],
}


def test_each_request_is_read_from_a_detailed_result_relative_to_the_first_start():
    rows = per_request({**RESULT, **DETAILED})
    assert rows == [
        {"start_s": 0.05, "ttft_ms": 80.0, "latency_s": 2.5, "input_tokens": 256, "output_tokens": 128, "ok": True},
        {"start_s": 0.0, "ttft_ms": 210.0, "latency_s": 2.6, "input_tokens": 256, "output_tokens": 128, "ok": True},
        {"start_s": 0.1, "ttft_ms": 0.0, "latency_s": 0.0, "input_tokens": 256, "output_tokens": 0, "ok": False},
    ]


@pytest.mark.parametrize("change", [
    {"ttfts": None},  # saved without --save-detailed
    {"ttfts": [0.1, 0.2]},  # lists of unequal lengths
    {"latencies": [1.0, "x", 2.0]},  # not numbers
    {k: [] for k in ("start_times", "ttfts", "latencies", "input_lens", "output_lens")},
])
def test_a_result_without_readable_per_request_lists_gives_none(change):
    doc = {**RESULT, **DETAILED, **change}
    assert per_request({k: v for k, v in doc.items() if v is not None}) is None


def _request(start: float, ttft: float, ok: bool = True) -> dict:
    return {"start_s": start, "ttft_ms": ttft, "latency_s": 2.0, "input_tokens": 256, "output_tokens": 128, "ok": ok}


def test_a_closed_loops_requests_group_into_its_waves():
    requests = [_request(0.0, 60), _request(0.0003, 200), _request(0.0005, 202),  # the first wave, all at once
                _request(2.0, 58), _request(2.016, 180), _request(2.018, 182),  # the others 16-18 ms after the first
                _request(4.0, 61), _request(4.015, 260), _request(4.017, 262), _request(4.5, 0.0, ok=False)]
    groups = waves(list(reversed(requests)))  # in order of start, whatever order the tool listed them in
    assert [len(g) for g in groups] == [3, 3, 3]  # a start 2 s after the last opens a wave; the failed one is left out
    assert [g[0]["ttft_ms"] for g in groups] == [60, 58, 61]
    assert waves([]) == []


def test_the_slowest_wave_is_set_against_the_median_one():
    requests = [_request(0.0, 200), _request(0.0, 60), _request(0.0, 202), _request(2.0, 58), _request(2.016, 180),
                _request(2.018, 182), _request(4.0, 61), _request(4.015, 260), _request(4.017, 262)]
    together = {"fastest": 181.0, "median": 201.0, "slowest": 261.0}
    assert wave_spread(requests) == {"waves": 3, "ttft_ms_prefilled_together": together, "slowest_over_median": 1.299}
    # the first wave's requests started together: the one prefilled alone is the one with the shortest TTFT
    assert wave_spread(requests[:3]) is None  # one wave: nothing to set it against
    assert wave_spread([_request(t, 50) for t in (0.0, 2.0, 4.0)]) is None  # waves of one request (concurrency 1)


def test_a_failing_tool_reports_its_stderr_tail(tmp_path):
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('x' * 5000 + 'the real reason'); sys.exit(3)"]
    with pytest.raises(BenchToolError, match="(?s)failed \\(exit 3\\); stderr tail:.*the real reason") as err:
        run_load(argv, {}, tmp_path / "r.json", 60)
    assert len(str(err.value)) < 3500


def test_a_tool_that_succeeds_is_read_from_its_result_file(tmp_path):
    result = tmp_path / "r.json"
    script = f"import json; json.dump({RESULT!r}, open({str(result)!r}, 'w'))"
    measured, doc = run_load([sys.executable, "-c", script], {}, result, 60)
    assert measured.completed == 40 and doc["model_id"] == "tiny"


def _record(run: str, pid: int | None, state: str = "ready") -> records.RunRecord:
    proc = records.ProcessRecord("serve", ("vllm", "serve", "m"), {}, "/tmp/serve.log", pid, pid)
    return records.RunRecord(run=run, engine="vllm", engine_version="0.32.0", model="m", served_name="m",
                             url="http://127.0.0.1:1", plan={"engine": "vllm"}, plan_hash="sha256:0",
                             hardware={"name": "local"}, processes=(proc,), state=state)


def test_an_unknown_run_exits_non_zero_with_the_fix(capsys):
    assert main(["bench", "20990101-000000-nosuch"]) != 0
    err = capsys.readouterr().err
    assert "no run '20990101-000000-nosuch'" in err and "servekit ps" in err


def test_a_run_whose_server_has_exited_is_not_benched(capsys):
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    records.save(_record("20990101-000000-exited", done.pid))
    assert main(["bench", "20990101-000000-exited"]) != 0
    err = capsys.readouterr().err
    assert "run 20990101-000000-exited is not running" in err and "has exited" in err


def test_a_stopped_run_is_not_benched(capsys):
    records.save(_record("20990101-000000-stoppd", None, state="stopped"))
    assert main(["bench", "20990101-000000-stoppd"]) != 0
    assert "is not running" in capsys.readouterr().err


def test_bad_workload_options_are_refused_before_anything_runs(capsys):
    assert main(["bench", "x", "--concurrency", "2", "--request-rate", "1"]) != 0
    assert "both given" in capsys.readouterr().err
    assert main(["bench", "x", "--input-len", "0"]) != 0
    assert "--input-len 0 must be at least 1" in capsys.readouterr().err


def test_a_bench_record_sits_beside_the_runs_verify_records():
    verify = write_evidence({"run": "r1", "ok": True})
    bench = write_evidence({"run": "r1", "kind": "bench", "inside": False})
    assert verify.parent == bench.parent and bench.name.endswith("-r1-bench.json")
    assert read_evidence(bench)["inside"] is False and json.loads(verify.read_text())["ok"] is True


VLLM_METRICS = """# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="tiny"} %d
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="tiny"} %d
"""


def test_the_prefix_cache_share_is_the_difference_of_the_servers_counters():
    from servekit.launch.metrics import parse_metrics, prefix_cache_use

    before, after = parse_metrics(VLLM_METRICS % (1000, 200)), parse_metrics(VLLM_METRICS % (11_000, 5200))
    assert prefix_cache_use(before, after) == {"queried_tokens": 10_000, "hit_tokens": 5000, "hit_rate": 0.5}
    assert prefix_cache_use({}, after)["hit_rate"] == pytest.approx(5200 / 11_000, abs=1e-4)
    assert prefix_cache_use(before, before)["hit_rate"] == 0.0  # nothing queried: no share, no division
    assert prefix_cache_use(before, parse_metrics("# TYPE x gauge\nx 1\n")) is None  # a server that does not count


def test_the_text_report_says_when_a_cache_shortened_the_measured_ttft():
    from servekit.cli.bench_cmd import render_text

    row = {"measured": 100.0, "predicted": 200.0, "interval80": [115.0, 350.0], "inside": False}
    doc = {"run": "r", "model": "m", "engine": "vllm", "engine_version": "0.32.0",
           "workload": {"input_len": 256, "output_len": 128, "concurrency": 4, "request_rate": None, "num_prompts": 40},
           "predicted": {"batch": 4}, "compared": {"ttft_ms.median": row}, "binding": "compute", "inside": False,
           "measured": {"completed": 40, "failed": 0}, "evidence": "e.json"}
    cached = render_text({**doc, "prefix_cache": {"queried_tokens": 10_240, "hit_tokens": 5120, "hit_rate": 0.5}})
    assert "prefix cache: 50% of 10,240 prompt tokens" in cached and "--no-enable-prefix-caching" in cached
    assert "prefix cache" not in render_text(doc)
    assert "prefix cache" not in render_text({**doc, "prefix_cache": {"queried_tokens": 10_240, "hit_tokens": 0,
                                                                      "hit_rate": 0.0}})


def test_the_text_report_says_how_the_cpu_moved_during_the_load():
    from servekit.cli.bench_cmd import render_text
    from servekit.perf.local_cpu import speed_change

    before = {"figures": {"memory_gb_s": 10.0, "bf16_tflops": 1.0}}
    after = {"figures": {"memory_gb_s": 8.0, "bf16_tflops": 1.1}}
    change = speed_change(before, after)
    assert change == {"memory_gb_s": 0.8, "bf16_tflops": 1.1}
    assert speed_change(before, {"figures": {"memory_gb_s": 9.0}}) == {"memory_gb_s": 0.9}  # a figure it lacks: left out
    doc = {"run": "r", "model": "m", "engine": "vllm", "engine_version": "0.32.0",
           "workload": {"input_len": 256, "output_len": 128, "concurrency": 4, "request_rate": None, "num_prompts": 40},
           "predicted": {"batch": 4}, "compared": {}, "binding": "compute", "inside": True,
           "measured": {"completed": 40, "failed": 0}, "evidence": "e.json"}
    text = render_text({**doc, "cpu_speed_change": change})
    assert "measured again after the load: memory_gb_s 0.80x, bf16_tflops 1.10x" in text
    assert "measured again" not in render_text(doc)


def test_the_text_report_says_the_p99_ttft_is_the_slowest_waves():
    from servekit.cli.bench_cmd import render_text

    doc = {"run": "r", "model": "m", "engine": "vllm", "engine_version": "0.32.0",
           "workload": {"input_len": 256, "output_len": 128, "concurrency": 4, "request_rate": None, "num_prompts": 40},
           "predicted": {"batch": 4}, "compared": {}, "binding": "compute", "inside": True,
           "measured": {"completed": 40, "failed": 0}, "evidence": "e.json"}
    spread = {"waves": 10, "ttft_ms_prefilled_together": {"fastest": 161.2, "median": 193.0, "slowest": 227.4},
              "slowest_over_median": 1.178}
    text = render_text({**doc, "waves": spread})
    assert "waves: 10; TTFT of each wave's requests prefilled together 161 .. 227 ms (median wave 193)" in text
    assert "1.18x the median wave's" in text
    assert "waves:" not in render_text(doc)
