"""The fitted constants: fitted on the named calibration points, and reproduced by the fit."""

from __future__ import annotations

import pytest

from servekit.perf.calibrate import (FIT_STARTS, Fit, Measured, best_fit, calibration_half, descend, fit_constants,
                                     held_out_intervals, loss, prepare, ratios, weighted_by_source)
from servekit.perf.constants import CALIBRATION_POINTS, CONSTANTS, FITTED, PerfConstant, fitted_values
from servekit.perf.intervals import INTERVAL80, symmetric_ratios


def data_lines(name: str) -> list[dict]:
    """A points file of bench/data, part of the project."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "data" / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table_lines() -> list[dict]:
    """bench/data's TensorRT-LLM table (``constants.TABLE_CALIBRATION``)."""
    return data_lines("trtllm-perf-overview-v1.0.jsonl")


def inferencemax_lines() -> list[dict]:
    """bench/data's InferenceMAX v1 runs (``constants.INFERENCEMAX_CALIBRATION``)."""
    return data_lines("inferencemax-v1.jsonl")


@pytest.fixture(scope="module")
def calibration(perf_points, profiles):
    ids = {p["id"] for p in perf_points}
    missing = [i for i in CALIBRATION_POINTS if i not in ids]
    assert not missing, f"calibration ids not in the visible file: {missing}"
    visible = prepare([p for p in perf_points if p["id"] in CALIBRATION_POINTS], profiles)
    return weighted_by_source(visible, prepare(calibration_half(table_lines()), profiles),
                              prepare(calibration_half(inferencemax_lines()), profiles))


def test_calibration_is_a_subset_and_leaves_an_evaluation_set(perf_points):
    ids = [p["id"] for p in perf_points]
    assert len(set(CALIBRATION_POINTS)) == len(CALIBRATION_POINTS)
    assert 0 < len(CALIBRATION_POINTS) < len(ids) - 10
    assert list(CALIBRATION_POINTS) == [p["id"] for p in calibration_half(perf_points)]


def test_the_calibration_half_takes_every_other_point_of_each_engine_and_device():
    rows = [{"id": str(i), "engine": e, "gpu": g} for i, (e, g) in enumerate(
        [("vllm", "h100"), ("vllm", "h100"), ("sglang", "h100"), ("vllm", "a100"), ("vllm", "h100"),
         ("sglang", "h100"), ("vllm", "a100")])]
    assert [r["id"] for r in calibration_half(rows)] == ["0", "2", "3", "4"]
    table = table_lines()
    half = calibration_half(table)
    assert 0.4 < len(half) / len(table) < 0.6


def test_each_source_weighs_the_same_in_the_loss(profiles):
    """Two sources of 1 and 3 points: each of the three weighs a third of the one, and the loss
    is the mean of the two sources' mean errors."""
    one = [Measured({"id": "a"}, {}, {})]
    three = [Measured({"id": str(i)}, {}, {}) for i in range(3)]
    joined = weighted_by_source(one, three)
    assert [m.weight for m in joined] == pytest.approx([1.0, 1 / 3, 1 / 3, 1 / 3])
    assert sum(m.weight for m in joined[:1]) == pytest.approx(sum(m.weight for m in joined[1:]))
    assert loss([], profiles, {}) == 0.0


def test_stored_constants_are_the_fit(calibration, profiles):
    """One more round of the fit from the stored values moves none of them."""
    assert fit_constants(calibration, profiles, fitted_values(), rounds=1) == fitted_values()


def test_stored_intervals_hold_the_calibration_points(calibration, profiles):
    """The stored intervals come from held-out errors (``bench/bench_perf_points.py --groups``
    checks they equal them), which are wider than the in-sample residuals: at least 80% of the calibration
    points lie inside, and each interval is symmetric in log space."""
    got = ratios(calibration, profiles, fitted_values())
    for key, (lo, hi) in INTERVAL80.items():
        assert lo * hi == pytest.approx(1.0, abs=2e-3), key
        inside = [lo <= r <= hi for r in got[key]]
        assert sum(inside) / len(inside) >= 0.8, key


def test_held_out_intervals_cover_eighty_percent_of_the_held_out_ratios():
    spread = [0.5, 0.7, 0.8, 0.9, 1.0, 1.05, 1.1, 1.3, 1.6, 2.5]
    rows = [{"ratios": {"tpot_ms": r, "ttft_ms": 1 / r}} for r in spread]
    bands = held_out_intervals(rows)
    assert set(bands) == {"tpot_ms", "ttft_ms"}
    lo, hi = bands["tpot_ms"]
    assert lo == pytest.approx(1 / hi) and bands["ttft_ms"] == pytest.approx(bands["tpot_ms"])
    inside = sum(lo - 1e-12 <= r <= hi + 1e-12 for r in spread)
    assert inside == 8  # 80% of ten, the two farthest outside
    assert symmetric_ratios([2.0, 0.5]) == pytest.approx((0.5, 2.0))


def test_pooled_intervals_weigh_every_out_of_sample_error_the_same():
    from servekit.perf.intervals import pooled_ratios

    spread = [0.5, 0.7, 0.8, 0.9, 1.0, 1.05, 1.1, 1.3, 1.6, 2.5]
    split = {"a": spread[:3], "b": spread[3:9], "c": spread[9:], "empty": []}
    assert pooled_ratios(split) == pytest.approx(symmetric_ratios(spread))
    # one source's hundred exact predictions outweigh another's single 3x miss
    assert pooled_ratios({"many": [1.0] * 100, "one": [3.0]})[1] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        pooled_ratios({"a": []})


def test_each_source_is_scored_inside_the_interval_pooled_from_the_others():
    from servekit.perf.intervals import leave_source_out, pooled_ratios

    by_source = {"a": [1.0, 1.1, 0.9], "b": [1.5, 0.7], "c": [3.0, 1.0, 0.2, 1.05], "d": []}
    held = leave_source_out(by_source)
    assert set(held) == {"a", "b", "c"}  # d has nothing to score
    for name, ((lo, hi), share) in held.items():
        assert (lo, hi) == pytest.approx(pooled_ratios({k: v for k, v in by_source.items() if k != name}))
        assert share == pytest.approx(sum(lo <= r <= hi for r in by_source[name]) / len(by_source[name]))
    assert held["c"][1] < 1.0 and held["a"][1] == 1.0
    assert leave_source_out({"alone": [1.0]}) == {}


def test_out_of_sample_ratios_join_held_out_rows_and_evaluation_points_per_source(calibration, profiles):
    from servekit.perf.calibrate import out_of_sample, pooled_intervals, ratio_rows

    first, second, third = calibration[0], calibration[1], calibration[2]
    rows = [{"id": first.id, "ratios": {"output_throughput_tok_s": 2.0}},
            {"id": second.id, "ratios": {"output_throughput_tok_s": 0.5, "ttft_ms": 1.25}}]
    sources = {"file": ({first.id, second.id}, [third]), "other": (set(), [third])}
    got = out_of_sample(rows, sources, profiles, fitted_values())
    evaluated = ratio_rows([third], profiles, fitted_values())[0]
    thr = "output_throughput_tok_s"
    assert got[thr]["file"][:2] == [2.0, 0.5] and got[thr]["file"][2] == pytest.approx(evaluated[thr])
    assert got[thr]["other"] == [pytest.approx(evaluated[thr])]
    assert ("ttft_ms" in evaluated) == (len(got["ttft_ms"].get("other", [])) == 1)
    bands = pooled_intervals(got)
    assert set(bands) == {k for k, sources in got.items() if any(sources.values())}


def test_a_weighted_quantile_leans_toward_the_heavier_values():
    from servekit.perf.intervals import quantile

    values = [1.0, 2.0, 3.0]
    assert quantile(values, 0.5) == 2.0 and quantile(values, 0.5, [5.0, 5.0, 5.0]) == 2.0
    assert quantile(values, 0.5, [1.0, 1.0, 10.0]) > 2.5 and quantile(values, 0.5, [10.0, 1.0, 1.0]) < 1.5
    assert quantile(values, 0.0) == 1.0 and quantile(values, 1.0) == 3.0 and quantile([4.0], 0.3) == 4.0
    # ten equal values: the 80% quantile lies between the eighth and ninth smallest
    assert quantile([float(i) for i in range(10)], 0.8) == pytest.approx(7.5)
    rows = [{"ratios": {"tpot_ms": r}, "weight": w} for r, w in ((1.1, 1.0), (1.2, 1.0), (3.0, 20.0))]
    assert held_out_intervals(rows)["tpot_ms"][1] == pytest.approx(3.0)


def test_every_fitted_constant_lies_on_its_grid():
    for c in CONSTANTS:
        if c.kind == FITTED:
            assert c.value in c.grid, c.id


def test_the_fit_keeps_the_lowest_loss_of_its_starts():
    """Coordinate descent settles in the basin nearest its start (one constant moved at a time
    cannot cross a ridge); ``best_fit`` keeps the lowest loss of the starts."""
    grid = tuple(float(i) for i in range(11))
    knobs = [PerfConstant("x", 0.0, FITTED, "", "", grid), PerfConstant("y", 0.0, FITTED, "", "", grid)]
    valleys = {2.0: 0.5, 8.0: 0.1}  # a shallow valley at (2, 2), a deeper one at (8, 8)

    def toy_loss(values):
        return min(abs(values["x"] - at) + abs(values["y"] - at) + depth for at, depth in valleys.items())

    fits = []
    for start in (1.0, 9.0, 7.0):
        ended = descend(knobs, {"x": start, "y": start}, toy_loss)
        fits.append(Fit({"x": start, "y": start}, ended, toy_loss(ended)))
    assert [(f.values["x"], f.values["y"]) for f in fits] == [(2.0, 2.0), (8.0, 8.0), (8.0, 8.0)]
    assert best_fit(fits) is fits[1]  # the lowest loss; of equal ones, the earlier


def test_the_starts_are_on_the_grids_of_the_constants_they_set():
    grids = {c.id: c.grid for c in CONSTANTS}
    for start in FIT_STARTS:
        for key, value in start.items():
            assert value in grids[key], (key, value)


def test_the_cross_check_table_is_the_published_table(perf_points):
    """bench/data's TensorRT-LLM table is what its writer makes of the page's figures and the visible
    file's config facts, less the runs the visible file already holds (none is a visible point)."""
    writer = _bench_script("make_trtllm_overview_points")
    stored = writer.read_points(writer.OUT)
    assert writer.lines(perf_points) == stored
    held = {writer.run_key(p) for p in perf_points if p["engine"] == "trtllm"}
    assert not held & {writer.run_key(p) for p in stored}
    assert not {p["id"] for p in stored} & set(CALIBRATION_POINTS)
    assert stored == table_lines()
    assert len(stored) > 100 and all(p["measured"]["output_throughput_tok_s"] > 0 for p in stored)


def test_the_amd_evaluation_source_is_the_published_tables_and_never_fitted_on(perf_points, profiles):
    """bench/data's Oracle MI300X lines are what their writer makes of the page's figures, no
    calibration point is among them, and every line gets a prediction from its structured fields."""
    from servekit.perf.calibrate import predicted, prepare
    from servekit.perf.constants import fitted_values

    writer = _bench_script("make_oracle_mi300x_points")
    stored = _bench_script("make_trtllm_overview_points").read_points(writer.OUT)
    assert writer.lines(perf_points) == stored and len(stored) == 11
    assert not {p["id"] for p in stored} & set(CALIBRATION_POINTS)
    batch_of = {p["id"]: p["workload"]["concurrency"] for p in stored}
    for m in prepare(stored, profiles):
        pred = predicted(m, profiles, fitted_values())
        assert pred.output_throughput_tok_s > 0 and pred.devices == 8
        if batch_of[m.id]:  # a batch of B prompts at once runs B sequences
            assert pred.batch == batch_of[m.id]


def test_the_inferencemax_source_is_its_writers_mapping_of_the_published_rows(profiles):
    """Each bench/data InferenceMAX line is what the writer makes of the published row it stands
    for (the row rebuilt from the line's own figures: the writer's mapping, lengths, launch
    settings and units hold), ids are unique, and every line gets a prediction from its
    structured fields. The rows themselves are read from the fork's git history (the writer's
    argument), which a test machine does not hold."""
    from servekit.perf.calibrate import predicted

    writer = _bench_script("make_inferencemax_points")
    stored = inferencemax_lines()
    assert len(stored) > 500 and len({p["id"] for p in stored}) == len(stored)
    assert (writer.mean_length(1024), writer.mean_length(8192)) == (922, 7373)
    lengths = {v: k for k, v in ((1024, 922), (8192, 7373))}
    engines = {v: k for k, v in writer.ENGINES.items()}
    for line in stored:
        precision = "fp4" if line["weights_precision"] in ("mxfp4", "nvfp4") else "fp8"
        rest = line["id"].split(f"-{precision}-", 1)[1]
        hw = rest[:rest.index(f"-{engines[line['engine']]}-tp")]
        row = {"model": line["model"], "hw": hw, "tp": line["tp"], "ep": line["ep"], "dp_attention": "true" if line["dp"] > 1 else "false",
               "conc": line["workload"]["concurrency"], "framework": engines[line["engine"]], "precision": precision,
               "output_tput_per_gpu": line["measured"]["output_throughput_tok_s"] / line["tp"],
               "median_ttft": line["measured"]["ttft_ms"] / 1e3, "median_tpot": line["measured"]["tpot_ms"] / 1e3}
        again = writer.point(row, lengths[line["workload"]["input_len"]], lengths[line["workload"]["output_len"]])
        assert {k: v for k, v in again.items() if k != "measured"} == {k: v for k, v in line.items() if k != "measured"}
    for m in prepare(stored[::40], profiles):
        pred = predicted(m, profiles, fitted_values())
        assert pred.output_throughput_tok_s > 0 and pred.ttft_ms > 0 and pred.tpot_ms > 0


def test_the_inferencemax_amd_lines_carry_the_amd_scripts_settings():
    """Every AMD line (MI300X, MI325X, MI355X) gets the ROCm image's release and what the AMD scripts
    pass: no KV cache format, no request cap; AMD's MXFP4 export is MXFP4, not NVIDIA's NVFP4."""
    writer = _bench_script("make_inferencemax_points")
    amd = [p for p in inferencemax_lines() if p["gpu"] in writer.AMD]
    assert {p["gpu"] for p in amd} == {"mi300x", "mi325x", "mi355x"}
    for line in amd:
        assert line["engine_version"] == {"vllm": "0.10.1", "sglang": "0.5.2"}[line["engine"]], line["id"]
        assert line["kv_cache_dtype"] is None and line["max_num_seqs"] is None, line["id"]
        assert line["weights_precision"] != "nvfp4", line["id"]
        assert line["num_continuous_decode_steps"] == (4 if line["engine"] == "sglang" else None), line["id"]
    assert {p["model"] for p in amd if p["weights_precision"] == "mxfp4" and p["engine"] == "sglang"} == {
        "amd/DeepSeek-R1-0528-MXFP4-Preview"}


def test_the_inferencemax_prompt_count_follows_each_pools_launcher():
    """Two launchers set the prompt count per checkpoint, comparing names as they spell them (the
    B200 one names an NVFP4 export without the "-V2" the runs used); every other pool sends 10 per client."""
    prompts = _bench_script("make_inferencemax_points").prompts_per_client
    assert prompts("b200", "deepseek-ai/DeepSeek-R1-0528", 1024) == 50
    assert prompts("b200", "deepseek-ai/DeepSeek-R1-0528", 8192) == 20
    assert prompts("b200", "nvidia/DeepSeek-R1-0528-FP4-V2", 1024) == 10
    assert prompts("mi355x", "amd/DeepSeek-R1-0528-MXFP4-Preview", 1024) == 50
    assert prompts("b200-trt", "deepseek-ai/DeepSeek-R1-0528", 1024) == 10
    assert prompts("mi300x", "deepseek-ai/DeepSeek-R1-0528", 1024) == 10
    assert prompts("b200", "openai/gpt-oss-120b", 1024) == 10


def test_the_public_run_source_is_its_writers_lines_and_never_fitted_on(profiles):
    """bench/data's single public vLLM runs are what their writer holds, no calibration point is
    among them, each gets a prediction from its structured fields, and a figure its thread does
    not print (the B200 Mistral run's throughput) is not scored."""
    from servekit.perf.calibrate import figures, predicted

    writer = _bench_script("make_public_vllm_points")
    stored = _bench_script("make_trtllm_overview_points").read_points(writer.OUT)
    assert stored == list(writer.POINTS) and len(stored) == 6
    assert not {p["id"] for p in stored} & set(CALIBRATION_POINTS)
    scored = {m.id: m for m in prepare(stored, profiles)}
    assert set(scored["modelopt-2015-mistral-small-24b-b200-c64"].measured) == {"ttft_ms", "tpot_ms"}
    assert set(scored["vllm-23696-gpt-oss-120b-b200-tp8"].measured) == {
        "output_throughput_tok_s", "ttft_ms", "tpot_ms"}
    for m in scored.values():
        got = figures(predicted(m, profiles, fitted_values()))
        assert all(got[k] > 0 for k in m.measured)


def cpu_loads() -> list[dict]:
    """bench/results/cpu-loads.jsonl: the CPU backend's held-out loads (part of the project)."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "results" / "cpu-loads.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def seeded_cpu():
    """hardware ``local``'s CPU row seeded with stated figures (the probe needs the engine
    environment's torch); the bench scripts' launches take each load's own figures in place of them."""
    from servekit.app.local_hardware import this_machine
    from servekit.perf import local_cpu

    machine = this_machine()
    if machine.gpus:
        pytest.skip("this machine has GPUs: hardware local is their taxonomy entry, not a measured CPU")
    figures = {"memory_gb_s": 20.0, "bf16_tflops": 0.25, "threads": 2, "torch": "stated"}
    local_cpu.cpu_speed(f"this machine ({machine.cpu_model})", lambda: dict(figures))
    return figures


def test_the_cpu_interval_is_the_rule_over_its_held_out_loads(seeded_cpu):
    """``CPU_INTERVAL80`` is what the symmetric rule gives over the recorded loads not fitted on,
    each predicted again from the CPU figures it recorded with the stored constants
    (``bench/bench_cpu_interval.py --ratios`` prints the same)."""
    from servekit.perf.intervals import CPU_INTERVAL80, cpu_interval

    loads = cpu_loads()
    assert len(loads) >= 8 and all(load["workload"] for load in loads)
    again = _bench_script("bench_cpu_interval").repredicted(loads)
    assert len(again) >= 18 and all(line["probe_model_gb_s"] > 0 for line in again)
    assert cpu_interval(again) == CPU_INTERVAL80


def test_a_load_predicted_again_gets_what_servekit_perf_gives_at_its_figures(seeded_cpu, tmp_path):
    """The bench scripts' launch at a load's recorded CPU figures (``bench_cpu_overheads.launch_at``)
    is the one ``servekit perf --hardware local`` builds when the probe measures those figures."""
    from servekit.perf.predict import predict

    overheads, interval = _bench_script("bench_cpu_overheads"), _bench_script("bench_cpu_interval")
    base = overheads.base_launch(tmp_path)  # hardware local: the seeded row, one rate for every size
    line = {"probe_model_gb_s": seeded_cpu["memory_gb_s"], "bf16_tflops": seeded_cpu["bf16_tflops"]}
    assert predict(overheads.launch_at(base, line), interval.LOAD) == predict(base, interval.LOAD)
    slower = predict(overheads.launch_at(base, {**line, "probe_model_gb_s": 10.0}), interval.LOAD)
    assert slower.tpot_ms > predict(base, interval.LOAD).tpot_ms


def test_the_cpu_constants_are_the_fit_over_the_stored_calibration_loads(seeded_cpu, tmp_path):
    """``CPU_FITTED`` is the fit over the calibration loads of bench/results/cpu-calibration-loads.jsonl
    (``bench/bench_cpu_overheads.py --stored``), which come from runs at more than one hour."""
    from servekit.perf.constants import CPU_CONSTANTS

    script = _bench_script("bench_cpu_overheads")
    lines = script.read_lines()
    cal = script.stored_points(lines, script.base_launch(tmp_path), "calibration")
    assert len(cal) >= 6 and len({line["date"][:13] for line in lines if line["role"] == "calibration"}) >= 2
    assert script.fit(cal) == {c.id: c.value for c in CPU_CONSTANTS}


def test_the_cpu_interval_takes_the_eightieth_percentile_of_the_loads_errors():
    from servekit.perf.intervals import cpu_interval

    def load(ratio: float) -> dict:
        figures = ("output_throughput_tok_s", "ttft_ms.median", "tpot_ms.median")
        return {"measured": {k: 10.0 * ratio for k in figures}, "predicted": {k: 10.0 for k in figures}}

    # |ln| of 1.1, 1/1.2 and 1.5 (each a third): the 80th percentile lies between 1.2's (at 1/2) and 1.5's (at 5/6)
    got = cpu_interval([load(1.1), load(1 / 1.2), load(1.5)])
    assert set(got) == {"output_throughput_tok_s", "ttft_ms", "tpot_ms"}  # no load recorded a p99: no p99 entry
    import math

    spread = math.log(1.2) + (math.log(1.5) - math.log(1.2)) * (0.8 - 0.5) / (5 / 6 - 0.5)
    for lo, hi in got.values():
        assert hi == pytest.approx(math.exp(spread), abs=1e-3) and lo == pytest.approx(1 / hi, abs=1e-3)


def test_a_p99_entry_is_taken_over_the_loads_that_recorded_a_p99():
    from servekit.perf.intervals import cpu_interval

    def load(ratio: float, p99: float | None = None) -> dict:
        figures = {"output_throughput_tok_s": 10.0, "ttft_ms.median": 10.0, "tpot_ms.median": 10.0}
        if p99 is not None:
            figures |= {"ttft_ms.p99": 10.0, "tpot_ms.p99": 10.0}
        measured = {k: v * (p99 if k.endswith("p99") else ratio) for k, v in figures.items()}
        return {"measured": measured, "predicted": figures}

    got = cpu_interval([load(1.0), load(1.0, p99=2.0), load(1.0, p99=2.0)])
    assert got["ttft_ms"] == (1.0, 1.0)  # the medians: all three loads, all exact
    assert got["ttft_ms.p99"] == got["tpot_ms.p99"] == (0.5, 2.0)  # only the two that recorded a p99


def test_a_p99_figure_takes_its_own_ratios_where_the_table_has_them():
    from servekit.perf.intervals import ratios_for

    table = {"ttft_ms": (0.8, 1.25), "ttft_ms.p99": (0.5, 2.0), "tpot_ms": (0.7, 1.4)}
    assert ratios_for(table, "ttft_ms") == ratios_for(table, "ttft_ms", "median") == (0.8, 1.25)
    assert ratios_for(table, "ttft_ms", "p99") == (0.5, 2.0)
    assert ratios_for(table, "tpot_ms", "p99") == (0.7, 1.4)  # no entry of its own: the median's
    assert ratios_for(INTERVAL80, "ttft_ms", "p99") == INTERVAL80["ttft_ms"]  # the GPU table has none


def test_each_backend_gets_its_own_intervals():
    from servekit.perf.constants import CPU_KEY
    from servekit.perf.intervals import CPU_INTERVAL80, interval80_for, interval_source

    assert interval80_for(CPU_KEY) is CPU_INTERVAL80
    assert interval80_for("vllm") is INTERVAL80 and interval80_for("sglang") is INTERVAL80
    assert "cpu-loads" in interval_source(CPU_KEY) and "leave-one-model-out" in interval_source("vllm")


def _bench_script(name: str):
    import importlib
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    added = [str(repo / "bench"), str(repo / "tests")]
    sys.path[:0] = added
    try:
        return importlib.import_module(name)
    finally:
        for path in added:
            sys.path.remove(path)


def test_the_bench_script_prints_a_runs_wave_spread_from_its_evidence(tmp_path):
    """bench/bench_cpu_interval.py's line of how far a run's slowest wave strays from its median one
    (the rule: ``servekit.launch.bench_serve.wave_spread``)."""
    import json

    script = _bench_script("bench_cpu_interval")
    requests = [{"start_s": start, "ttft_ms": ttft, "latency_s": 2.0, "ok": True}
                for start, ttft in ((0.0, 60), (0.0, 200), (2.0, 58), (2.02, 180), (4.0, 61), (4.02, 260))]
    evidence = tmp_path / "bench.json"
    evidence.write_text(json.dumps({"requests": requests}))
    line = script.wave_line({"evidence": str(evidence)})
    assert "waves: 3" in line and "180 .. 260 ms, median 200" in line and "slowest / median wave 1.30" in line
    evidence.write_text(json.dumps({}))  # evidence of a bench before the requests were kept
    assert script.wave_line({"evidence": str(evidence)}) is None


def test_leaving_a_model_out_leaves_all_its_points_out_together(monkeypatch):
    """``leave_group_out`` refits once per model (by shape: a checkpoint's quantized release is the
    same model) on the other models' points only, and returns one row per point in their order."""
    from types import SimpleNamespace

    from servekit.perf import calibrate

    def point(i: str, hidden: int, experts: int | None = None) -> Measured:
        facts = {"hidden_size": hidden, "num_hidden_layers": 32, "num_experts": experts}
        return Measured({"id": i, "config_facts": facts}, {}, {"tpot_ms": 10.0})

    points = [point("a-bf16", 4096), point("b", 5120), point("a-fp8", 4096), point("c", 4096, 64)]
    fitted_on: list[set[str]] = []

    def fake_fit(pts, profiles, values, rounds):
        fitted_on.append({m.id for m in pts})
        return {"k": float(len(pts))}

    monkeypatch.setattr(calibrate, "fit_constants", fake_fit)
    monkeypatch.setattr(calibrate, "predicted", lambda m, profiles, values: SimpleNamespace(
        output_throughput_tok_s=1.0, ttft_ms=1.0, tpot_ms=5.0 * values["k"]))
    rows = calibrate.leave_group_out(points, {}, {})
    assert sorted(map(sorted, fitted_on)) == [["a-bf16", "a-fp8", "b"], ["a-bf16", "a-fp8", "c"], ["b", "c"]]
    assert [r["id"] for r in rows] == ["a-bf16", "b", "a-fp8", "c"]
    # each row is predicted by the constants fitted without its model: a's two by a fit on two points
    assert [r["ratios"]["tpot_ms"] for r in rows] == pytest.approx([1.0, 10.0 / 15.0, 1.0, 10.0 / 15.0])
