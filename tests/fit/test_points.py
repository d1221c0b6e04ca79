"""Predictions against measured vLLM KV pools (../shared/reference/kv-points-visible.jsonl).

This is an accuracy assertion over public measurements, not a timing test: the median
relative error of ``kv_tokens`` over high- and medium-confidence points must stay <= 5%.
"""

from __future__ import annotations

import json
import statistics

import pytest

from servekit.app.fit import predict_points
from servekit.fit.points import facts_from_point, launch_from_point, predict_point, weights_per_rank_from_point
from testing.shared import REFERENCE

POINTS = REFERENCE / "kv-points-visible.jsonl"
TARGET_MEDIAN = 0.05


@pytest.fixture(scope="module")
def points() -> list[dict]:
    if not POINTS.is_file():
        pytest.skip(f"{POINTS} is not present")
    return [json.loads(line) for line in POINTS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _errors(points, kinds=None):
    out = []
    for point in points:
        if point["confidence"] not in ("high", "medium"):
            continue
        if kinds and not any(k in point["arch_type"] for k in kinds):
            continue
        predicted = predict_point(point)["kv_tokens"]
        if predicted is not None:
            out.append(abs(predicted / point["measured_kv_tokens"] - 1))
    return out


def test_median_error_over_confident_points_is_within_target(points):
    errors = _errors(points)
    assert len(errors) >= 15
    assert statistics.median(errors) <= TARGET_MEDIAN


@pytest.mark.parametrize("kind", ["dense GQA", "MLA", "hybrid linear attention"])
def test_median_error_per_architecture_kind(points, kind):
    errors = _errors(points, [kind])
    assert errors, kind
    assert statistics.median(errors) <= TARGET_MEDIAN


def test_output_lines_keep_order_and_shape(points):
    lines = [json.dumps(p) for p in points] + ["not json", json.dumps({"model": "x"})]
    results = list(predict_points(lines))
    assert len(results) == len(points) + 2
    for point, result in zip(points, results):
        assert set(result) >= {"kv_tokens", "kv_bytes_per_token", "weights_gib_per_rank"}
    assert "error" in results[-2] and "error" in results[-1]


def test_point_parsing_rules(points):
    kimi = points[0]
    facts, assumed = facts_from_point(kimi["config_facts"])
    assert facts.layer_counts() == {"mla": 61} and not assumed
    assert predict_point(kimi)["kv_bytes_per_token"] == 61 * 576 * 2
    flags = {"extra_flags": ["--speculative-config mtp n=3", "--max-num-seqs 8", "--max-num-batched-tokens (compose)"],
             "tp": 2, "kv_cache_dtype": "fp8 (e4m3)", "max_model_len": 1024, "gpu_memory_utilization": 0.9}
    launch = launch_from_point(flags)
    assert (launch.spec_method, launch.spec_tokens, launch.max_num_seqs) == ("mtp", 3, 8)
    assert launch.kv_cache_dtype == "fp8" and launch.max_num_batched_tokens is None
    assert weights_per_rank_from_point({"weights_gib": 61.0, "tp": 2, "weights_gib_per_rank": 30.59}) == (30.59, False)
    assert weights_per_rank_from_point({"weights_gib": 61.0, "tp": 2, "notes": "weights 30.59 GiB/GPU."}) == (30.5, False)
    assert weights_per_rank_from_point({"weights_gib": 28.0, "tp": 2, "notes": ""}) == (14.0, False)
