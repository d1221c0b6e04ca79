"""Predictions against measured vLLM KV pools (../shared/reference/kv-points-visible.jsonl, with the
structured fields of tests/fit/data/kv_points_structured.yaml laid over their free text).

This is an accuracy assertion over public measurements, not a timing test: the median
relative error of ``kv_tokens`` (with the logged available KV memory: the KV bytes per token and
the block layout) over high- and medium-confidence points must stay <= 5%.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import replace

import pytest

from servekit.app.fit import predict_points
from servekit.fit.constants import value
from servekit.fit.points import facts_from_point, launch_from_point, predict_point, weights_per_rank_from_point

TARGET_MEDIAN = 0.05


@pytest.fixture(scope="module")
def points(structured_points) -> list[dict]:
    return [point for _, point in structured_points]


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
    flags = {"extra_flags": ["--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'",
                             "--max-num-seqs 8", "VLLM_USE_V1=1"],
             "tp": 2, "kv_cache_dtype": "fp8", "max_model_len": 1024, "gpu_memory_utilization": 0.9}
    launch = launch_from_point(flags)
    assert (launch.spec_method, launch.spec_tokens, launch.max_num_seqs) == ("mtp", 3, 8)
    assert launch.kv_cache_dtype == "fp8" and launch.max_num_batched_tokens is None
    assert weights_per_rank_from_point({"weights_gib": 61.0, "tp": 2, "weights_gib_per_rank": 30.59}) == (30.59, False)
    assert weights_per_rank_from_point({"weights_gib": 61.0, "tp": 2, "notes": "weights 30.59 GiB/GPU."}) == (30.5, False)
    assert weights_per_rank_from_point({"weights_gib": 28.0, "tp": 2, "notes": ""}) == (14.0, False)


HYBRID_VL = {"num_hidden_layers": 64, "full_attention_interval": 4, "num_attention_heads": 24,
             "num_key_value_heads": 4, "head_dim": 256, "hidden_size": 5120, "intermediate_size": 17408,
             "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_key_head_dim": 128,
             "linear_value_head_dim": 128, "mtp_num_hidden_layers": 1, "multimodal": True}
MTP_3 = "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'"
MTP_1 = "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'"


def test_a_points_vision_config_is_read_and_otherwise_the_tower_is_assumed():
    tower = {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "patch_size": 14, "image_size": 1540}
    facts, _ = facts_from_point({**HYBRID_VL, "vision_config": tower})
    assert facts.has_vision and facts.vision is not None and facts.vision.image_size == 1540
    plain, _ = facts_from_point(HYBRID_VL)
    assert plain.has_vision and plain.vision is None


def test_checkpoint_weights_less_what_the_launch_does_not_load():
    from servekit.facts.estimate import estimated_weight_bytes
    from servekit.facts.vision import vision_params
    from servekit.fit.encoder import fallback_tower

    point = {"config_facts": HYBRID_VL, "weights_gib": 30.0, "tp": 2}
    facts, _ = facts_from_point(HYBRID_VL)
    gib = 1 << 30
    drafting = launch_from_point({**point, "extra_flags": [MTP_3]})
    assert weights_per_rank_from_point(point, facts, drafting) == (15.0, False)
    mtp = estimated_weight_bytes(HYBRID_VL, facts).mtp
    plain = launch_from_point(point)
    assert weights_per_rank_from_point(point, facts, plain)[0] == pytest.approx((30.0 - mtp / gib) / 2)
    text_only = launch_from_point({**point, "extra_flags": ["--language-model-only"]})
    vision = vision_params(fallback_tower(), 5120) * 2
    assert weights_per_rank_from_point(point, facts, text_only)[0] == pytest.approx((30.0 - (mtp + vision) / gib) / 2)


def test_estimated_weights_of_a_multimodal_point_include_its_tower():
    from servekit.facts.estimate import estimated_weight_bytes
    from servekit.facts.vision import vision_params
    from servekit.fit.encoder import fallback_tower

    point = {"config_facts": HYBRID_VL, "tp": 1, "extra_flags": [MTP_1]}
    facts, _ = facts_from_point(HYBRID_VL)
    weights, estimated = weights_per_rank_from_point(point, facts, launch_from_point(point))
    # an unstated vocabulary is priced as the sampler assumes it (default_vocab)
    sized = facts if facts.vocab_size else replace(facts, vocab_size=int(value("default_vocab")))
    text = estimated_weight_bytes(HYBRID_VL, sized).total
    assert estimated and weights == pytest.approx((text + vision_params(fallback_tower(), 5120) * 2) / (1 << 30))
