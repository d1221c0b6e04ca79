"""The kv-points schema reads structured fields only (servekit.fit.point_fields): each free-text form
the reader used to guess from is refused with a PointError naming the field, and the structured
form that replaces it is read."""

from __future__ import annotations

import pytest

from servekit.fit.point_fields import PointError
from servekit.fit.points import facts_from_point, launch_from_point, predict_point
from servekit.fit.versions import read_version, series_readings, unsettled_rules

POINT = {"config_facts": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                          "head_dim": 128, "hidden_size": 4096, "vocab_size": 128256},
         "gpu_model": "h100", "tp": 1, "gpu_memory_utilization": 0.9, "max_model_len": 8192,
         "weights_gib": 14.99, "vllm_version": "0.19.0"}


@pytest.mark.parametrize("field,text", [
    ("vllm_version", "cuda 12.8 vllm 0.9.0"),          # not the first dotted number anywhere (12.8.0)
    ("vllm_version", "V0 engine (~0.6.x, Dec 2024)"),   # the engine is its own field
    ("vllm_version", "vllm/vllm-openai:latest late 2025 (~0.11.0)"),
    ("vllm_version", "0.1.dev19754+g3a0914114"),        # untagged: no release
    ("engine", "V0"),
    ("gpu_model", "single 80 GB-class NVIDIA GPU -> pre-Blackwell"),
    ("kv_cache_dtype", "fp8 with e4m3"),
    ("kv_cache_dtype", "(e4m3) fp8"),                   # a remark goes after the value
    ("vllm_version", "0.19.0 (image) (patched)"),      # one remark at most
    ("entrypoint", "offline LLM() batch inference"),
    ("enforce_eager", "yes"),
    ("quantization", "FP8 block-scaled"),
    ("quantization", {"method": "fp8", "bits": 4}),
    ("quantization", {"method": "int4", "bits": 4, "weight_block_size": [128, 128]}),
    ("extra_flags", ["--speculative-config mtp n=3"]),  # not vLLM's JSON value
    ("extra_flags", ["vision on"]),
    ("extra_flags", ["--max-num-batched-tokens (compose)"]),
    ("env", "VLLM_USE_V1=1"),
])
def test_free_text_is_refused_naming_the_field(field, text):
    with pytest.raises(PointError, match=field):
        predict_point({**POINT, field: text})


@pytest.mark.parametrize("field,text,read", [
    ("vllm_version", "0.19.0 (vllm/vllm-openai:v0.19.0)", "0.19.0"),
    ("vllm_version", "0.19.0 (~0.11)", "0.19.0"),                    # the remark is never read
    ("vllm_version", "~v0.11.x (Nov 2025; kv_cache_utils.py:1229)", "0.11"),
    ("kv_cache_dtype", "fp8 (e4m3)", "fp8"),
    ("kv_cache_dtype", "auto (fp8)", "auto"),                         # the remark is never read
])
def test_a_value_may_carry_one_parenthesized_remark_that_is_never_read(field, text, read):
    from servekit.fit.point_fields import read_field

    assert read_field(field, text) in (read, f"~v{read}.x")
    plain = predict_point({**POINT, field: read_field(field, text)})
    assert predict_point({**POINT, field: text})["kv_tokens"] == plain["kv_tokens"]
    if field == "kv_cache_dtype":
        assert plain["kv_tokens"] == predict_point({**POINT, field: read})["kv_tokens"]


@pytest.mark.parametrize("key,text", [
    ("multimodal", "vision tower in checkpoint"),
    ("attention_layers", "3 chunked-local : 1 global"),
    ("attention_layers", {"full": 8, "sliding": 8}),   # does not add up to the 32 layers
    ("attention_layers", {"global": 8, "local": 24}),  # kinds are full, sliding, linear
])
def test_free_text_in_config_facts_is_refused_naming_the_key(key, text):
    with pytest.raises(PointError, match=f"config_facts.{key}"):
        predict_point({**POINT, "config_facts": {**POINT["config_facts"], key: text}})


def test_the_v0_engine_is_refused_for_a_release_without_it():
    with pytest.raises(PointError, match="engine"):
        predict_point({**POINT, "engine": "v0"})
    assert predict_point({**POINT, "engine": "v0", "vllm_version": "0.8.5"})["kv_tokens"] > 0


@pytest.mark.parametrize("text,read_as,form,approximate", [
    ("0.19.0", "0.19.0", "release", False),
    ("v0.10.1.1", "0.10.1.1", "release", False),
    ("0.20.1rc1.dev16+g7a1eb8ac2", "0.20.1rc1.dev16+g7a1eb8ac2", "development build", False),
    ("~0.11.0", "0.11.0", "approximate", True),
    ("0.11.x", "0.11", "approximate", True),
])
def test_the_output_says_how_the_version_was_read(text, read_as, form, approximate):
    version = predict_point({**POINT, "vllm_version": text})["version"]
    assert {k: version[k] for k in ("read_as", "form", "approximate")} == {
        "read_as": read_as, "form": form, "approximate": approximate}
    # an approximate version names the rules it leaves open; an exact one has none to name
    assert ("unsettled" in version) == approximate


def test_an_approximate_version_names_the_rules_its_series_changes():
    """~0.11 spans 0.11.0 to 0.12: the sampler changed at 0.11.1, so the reading as written (0.11.0,
    FlashInfer) may not be what ran; rules that change at the series' first release are settled."""
    assert unsettled_rules(read_version("~0.11")) == ("sampler",)
    assert unsettled_rules(read_version("0.11.x")) == ("sampler",)
    assert unsettled_rules(read_version("~0.9")) == ("v1_default", "hybrid_allocator")
    assert unsettled_rules(read_version("~0.19")) == ()
    assert unsettled_rules(read_version("0.11.1")) == ()
    assert predict_point({**POINT, "vllm_version": "~0.11"})["version"]["unsettled"] == ["sampler"]


def test_an_approximate_version_gives_the_pool_under_each_reading_of_its_series():
    """Not guessed: the figure stays the version as written (0.11.0: FlashInfer's sampler, 8 B per
    logit), and the output adds the pool under 0.11.1's rules (the sort sampler, 38.9 B per logit,
    a larger activation peak over the 1,024 x 128,256 logits of the dummy pass: a smaller pool)."""
    assert series_readings(read_version("~0.11")) == ("0.11", "0.11.1")
    assert series_readings(read_version("~0.11.1")) == ("0.11.1", "0.11.0")  # the stretch before it too
    assert series_readings(read_version("~0.19")) == ()  # no rule changes inside: one reading
    assert series_readings(read_version("0.11.1")) == ()
    version = predict_point({**POINT, "vllm_version": "~0.11"}, use_logged_memory=False)["version"]
    by = version["kv_tokens_by_reading"]
    assert version["readings"] == ["0.11", "0.11.1"] and list(by) == version["readings"]
    as_written = predict_point({**POINT, "vllm_version": "0.11.0"}, use_logged_memory=False)["kv_tokens"]
    later = predict_point({**POINT, "vllm_version": "0.11.1"}, use_logged_memory=False)["kv_tokens"]
    assert by == {"0.11": as_written, "0.11.1": later} and later < as_written
    exact = predict_point({**POINT, "vllm_version": "0.11.0"}, use_logged_memory=False)["version"]
    assert "readings" not in exact and "kv_tokens_by_reading" not in exact


def test_an_unstated_version_is_reported_as_such():
    out = predict_point({k: v for k, v in POINT.items() if k != "vllm_version"})
    assert out["version"]["read_as"] is None and not out["version"]["approximate"]


def test_a_stated_engine_decides_the_accounting():
    v0 = predict_point({**POINT, "vllm_version": "0.8.5", "engine": "v0"}, use_logged_memory=False)
    v1 = predict_point({**POINT, "vllm_version": "0.8.5", "engine": "v1"}, use_logged_memory=False)
    assert v0["kv_tokens"] != v1["kv_tokens"]


def test_attention_layers_lay_out_the_stack():
    facts, _ = facts_from_point({**POINT["config_facts"], "sliding_window": 512,
                                 "attention_layers": {"sliding": 24, "full": 8}})
    assert facts.layer_counts() == {"sliding": 24, "full": 8}
    assert facts.layers[3] == "full" and facts.layers[0] == "sliding"
    # a global sliding window with no layer counts is every layer sliding, as in config.json
    windowed, _ = facts_from_point({**POINT["config_facts"], "sliding_window": 512, "attention": "global"})
    assert windowed.layer_counts() == {"sliding": 32}


def test_speculative_config_is_read_from_vllms_own_json():
    launch = launch_from_point({"extra_flags": [
        "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'"]})
    assert (launch.spec_method, launch.spec_tokens) == ("mtp", 3)


def test_reference_lines_as_written_hold_free_text_each_named(raw_points):
    """Most lines of the shared reference set state a field in free text: the reader refuses each
    with the field's name (the bench and tests read them through tests/fit/data)."""
    refused = {}
    for pid, point in raw_points:
        try:
            predict_point(point)
        except PointError as exc:
            refused[pid] = str(exc)
    assert len(refused) >= 25
    assert all(any(field in message for field in ("vllm_version", "extra_flags", "kv_cache_dtype",
                                                  "config_facts.multimodal"))
               for message in refused.values())


def test_every_reference_line_reads_with_its_structured_fields(structured_points):
    for pid, point in structured_points:
        out = predict_point(point)
        assert out["kv_bytes_per_token"] > 0, pid


def _table_over(line_version, table_version):
    from servekit.fit.point_table import StructuredField, TableEntry, structured
    entry = TableEntry("m", {"vllm_version": StructuredField(table_version, "the log's evidence")})
    return structured("f:1", {"model": "m", "vllm_version": line_version}, {"f:1": entry})["vllm_version"]


@pytest.mark.parametrize("line,table,read", [
    ("~v0.11.x (Nov 2025; kv_cache_utils.py:1229)", "0.11.1", "0.11.1"),  # settled inside its series
    ("~0.11", "0.12.0", "~0.11"),       # another series: the line is read
    ("0.11.0", "0.11.1", "0.11.0"),     # an exact version is never replaced
    ("~0.11", "~0.11.1", "~0.11"),      # approximate for approximate: the line is read
])
def test_the_table_settles_an_approximate_version_only_inside_its_series(line, table, read):
    assert _table_over(line, table) == read
