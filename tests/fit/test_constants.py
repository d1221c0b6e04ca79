"""The memory model's constants: one table, each with a source; version rules select by release."""

from __future__ import annotations

from servekit.fit.constants import ASSUMED, CODE, CONSTANTS, MEASURED, overridden, value
from servekit.fit.points import predict_point
from servekit.fit.versions import RULES, rule


def test_every_constant_says_what_it_is_and_where_it_comes_from():
    ids = [c.id for c in CONSTANTS]
    assert len(ids) == len(set(ids))
    for c in CONSTANTS:
        assert c.kind in (CODE, MEASURED, ASSUMED) and c.stands_for and c.source


def test_overrides_apply_inside_the_block_only():
    base = value("non_torch_gib")
    with overridden({"non_torch_gib": 9.0}):
        assert value("non_torch_gib") == 9.0
    assert value("non_torch_gib") == base


def test_version_rules_select_by_release():
    assert rule("sampler", "0.10.1.1") == "sampler_bytes_per_logit_flashinfer"
    assert rule("sampler", "0.11.0") == "sampler_bytes_per_logit_flashinfer"
    assert rule("sampler", "0.11.1") == "sampler_bytes_per_logit_sort"  # FlashInfer's sampler opt-in
    assert rule("sampler", "0.16.0") == "sampler_bytes_per_logit_sort"
    assert rule("sampler", "0.19.0") == "sampler_bytes_per_logit_triton"
    assert rule("sampler", None) == "sampler_bytes_per_logit_triton"
    assert rule("profile_tokens", "~0.6") == "max_model_len"
    assert [rule("non_torch", v) for v in ("0.10.2", "0.11.0", "0.17.1", "0.18.0")] == [
        "non_torch_gib", "non_torch_gib_after_setup", "non_torch_gib_after_setup", "non_torch_gib"]
    assert [rule("tp_comm", v) for v in ("0.10.2", "0.16.0", "0.17.0")] == [
        "setup_counted", "setup_excluded", "setup_counted"]
    assert rule("moe_workspace", "0.13.0") == "transient" and rule("moe_workspace", "0.14.0") == "persistent"
    assert rule("accounting", "0.26.0") == "profile_increase" and rule("accounting", "0.27.0") == "consumed"
    assert all(r.source for r in RULES)
    named = {r.value for r in RULES if r.id in ("sampler", "non_torch")}
    assert named <= {c.id for c in CONSTANTS}  # every rule that names a constant names one in the table


def test_points_reader_never_reads_notes():
    point = {"config_facts": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                              "head_dim": 128, "hidden_size": 4096, "vocab_size": 128256},
             "gpu_model": "h100", "gpu_mem_gib": 79.19, "tp": 2, "gpu_memory_utilization": 0.9,
             "max_model_len": 8192, "weights_gib": 16.0, "vllm_version": "0.19.0"}
    plain = predict_point(point)
    noted = predict_point({**point, "notes": "weights 3.0 GiB/GPU; weights/GPU 3.0 GiB"})
    assert plain == noted and plain["weights_gib_per_rank"] == 8.0
    logged = predict_point({**point, "weights_gib_per_rank": 8.5})
    assert logged["weights_gib_per_rank"] == 8.5 and logged["kv_tokens"] < plain["kv_tokens"]


def test_cpu_kv_space_from_env_or_flag_entry():
    cf = {"num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "head_dim": 64}
    base = {"config_facts": cf, "gpu_model": "cpu", "tp": 1, "max_model_len": 2048, "weights_gib": 0.92}
    from_flag = predict_point({**base, "extra_flags": ["VLLM_CPU_KVCACHE_SPACE=8"]})
    from_env = predict_point({**base, "env": {"VLLM_CPU_KVCACHE_SPACE": "8"}})
    assert from_flag["kv_tokens"] == from_env["kv_tokens"] == 8 * (1 << 30) // (24 * 2 * 2 * 64 * 2) // 128 * 128


def test_whole_model_predicts_without_logged_memory(structured_points):
    stating = [point for _, point in structured_points if point.get("gpu_mem_gib")]
    assert len(stating) >= 40
    for point in stating:
        assert predict_point(point, use_logged_memory=False)["kv_tokens"] is not None
