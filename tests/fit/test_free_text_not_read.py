"""No free-text field of a kv-points line is read: notes, source, config_source, the gpu text (beyond
the device id in gpu_model), weights_dtype, arch_type, model and the descriptions in config_facts can
hold anything, and every prediction stays the same, on every reference point and both ways
(logged memory and the whole memory model)."""

from __future__ import annotations

import pytest

from servekit.fit.points import predict_point

GARBAGE = "V1 engine 0.27.1 cuda 12.8 B200 NVL 192 GB-class fp8 block-scaled mtp n=7 global (ignored)"
FREE_TEXT = ("notes", "source", "config_source", "gpu", "weights_dtype", "arch_type", "model")
CONFIG_TEXT = ("attention", "moe", "layer_pattern", "note")


def _garbled(point: dict, value: object) -> dict:
    facts = dict(point["config_facts"])
    for key in CONFIG_TEXT:
        facts[key] = value
    return {**point, **{key: value for key in FREE_TEXT}, "config_facts": facts}


def _both(point: dict) -> tuple[dict, dict]:
    return predict_point(point), predict_point(point, use_logged_memory=False)


@pytest.mark.parametrize("value", [GARBAGE, "", None, 12.8, {"gpu": "H100"}])
def test_free_text_fields_never_change_a_prediction(structured_points, value):
    for pid, point in structured_points:
        assert _both(_garbled(point, value)) == _both(point), pid


def test_free_text_fields_may_be_absent(structured_points):
    for pid, point in structured_points:
        bare = {k: v for k, v in point.items() if k not in FREE_TEXT}
        bare["config_facts"] = {k: v for k, v in point["config_facts"].items() if k not in CONFIG_TEXT}
        assert _both(bare) == _both(point), pid


def test_the_device_comes_from_its_id_not_its_text():
    """Same gpu text, other device id: another device (the id is read, the text is not)."""
    point = {"config_facts": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                              "head_dim": 128, "hidden_size": 4096, "vocab_size": 128256},
             "gpu": "NVIDIA H100 80GB HBM3", "tp": 1, "gpu_memory_utilization": 0.9, "max_model_len": 8192,
             "weights_gib": 14.99, "vllm_version": "0.19.0"}
    h100 = predict_point({**point, "gpu_model": "h100"}, use_logged_memory=False)
    l40s = predict_point({**point, "gpu_model": "l40s"}, use_logged_memory=False)
    assert h100["kv_tokens"] > l40s["kv_tokens"] > 0
    assert predict_point(point, use_logged_memory=False)["kv_tokens"] is None  # the text alone names nothing
