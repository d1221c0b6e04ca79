"""Every kv-points line that states its device memory gets a figure, also a line servekit never saw.

Lines held back from the project carry their structured fields themselves, without the logged
memory, the measured pool or the notes. These tests take such lines (a small file of its own,
``data/heldback_style_points.jsonl``, and every visible reference point stripped the same way)
and vary the fields the schema allows: versions in each documented form, the engine, the
quantization formats, configs missing optional keys. Each variant must give a number; what the
line leaves out is a stated assumption named in the output (``assumed``), and a field written
in a form the reader does not read is set aside and named (``set_aside``), never guessed from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from servekit.facts.quant_bytes import FORMATS
from servekit.fit.point_fields import PointError, normalized_point, readable_point, reads
from servekit.fit.point_table import TableEntry, StructuredField, read_points, structured
from servekit.fit.points import ASSUMED_GATED_DELTANET, ASSUMED_MLA, facts_from_point, predict_point

HELD_BACK_STYLE = Path(__file__).parent / "data" / "heldback_style_points.jsonl"
LOGGED = ("available_kv_gib_per_gpu", "measured_kv_tokens", "measured_concurrency")
FREE_TEXT = ("notes", "source", "config_source", "gpu", "weights_dtype", "arch_type")

VERSIONS = [
    # (text, read as, form, approximate)
    (None, None, "not stated: the newest release's rules", False),
    ("0.19.0", "0.19.0", "release", False),
    ("v0.19.0", "0.19.0", "release", False),
    ("0.10.1.1", "0.10.1.1", "release", False),
    ("0.6.4.post1", "0.6.4.post1", "release", False),
    ("v0.8.5.post1", "0.8.5.post1", "release", False),
    ("0.9.1.dev705+g01220ce89", "0.9.1.dev705+g01220ce89", "development build", False),
    ("0.11.1rc2", "0.11.1rc2", "development build", False),
    ("0.20.1rc1.dev16+g7a1eb8ac2", "0.20.1rc1.dev16+g7a1eb8ac2", "development build", False),
    ("0.26.1rc1.dev608+g99a10304d", "0.26.1rc1.dev608+g99a10304d", "development build", False),
    ("~0.11", "0.11", "approximate", True),
    ("~v0.11.0", "0.11.0", "approximate", True),
    ("0.11.x", "0.11", "approximate", True),
    ("~v0.6.x", "0.6", "approximate", True),
    ("0.27", "0.27", "approximate", True),
    ("0.32.0", "0.32.0", "release", False),
]


def unseen(point: dict) -> dict:
    """A line as held back: no logged memory, no measured pool, no free text."""
    return {k: v for k, v in point.items() if k not in LOGGED + FREE_TEXT}


def states_memory(point: dict) -> bool:
    return bool(point.get("gpu_mem_gib")) or bool(point.get("gpu_model")) and point["gpu_model"] != "cpu"


def figure(point: dict) -> dict:
    out = predict_point(point, use_logged_memory=False, set_aside_unreadable=True)
    assert isinstance(out["kv_tokens"], int), point.get("model")
    return out


@pytest.fixture(scope="module")
def held_back_style() -> list[tuple[str, dict]]:
    return [(pid, unseen(point)) for pid, point in read_points(HELD_BACK_STYLE)]


def test_every_held_back_style_line_gets_a_figure(held_back_style):
    assert len(held_back_style) == 7
    for pid, point in held_back_style:
        assert states_memory(point), pid
        out = figure(point)
        assert out["kv_bytes_per_token"] > 0, pid


@pytest.mark.parametrize("text,read_as,form,approximate", VERSIONS)
@pytest.mark.parametrize("engine", [None, "v0", "v1"])
def test_each_version_form_and_engine_gives_a_figure(held_back_style, text, read_as, form, approximate, engine):
    for pid, point in held_back_style:
        line = {**point, "vllm_version": text}
        if engine is None:
            line.pop("engine", None)
        else:
            line["engine"] = engine
        out = figure(line)
        assert out["version"]["read_as"] == read_as and out["version"]["approximate"] == approximate, pid
        assert out["version"]["form"] == form, pid
        notes = out.get("set_aside") or []
        # a V0 engine stated for a release without it is set aside (named), never a refusal
        if engine == "v0" and text is not None and out["version"]["read_as"] and _without_v0(text):
            assert any(n.startswith("engine set aside") for n in notes), (pid, text)
        else:
            assert not any(n.startswith("engine") for n in notes), (pid, text, notes)


def _without_v0(text: str) -> bool:
    from packaging.version import Version

    from servekit.fit.versions import read_version

    return read_version(text).version >= Version("0.11")


@pytest.mark.parametrize("method", sorted(FORMATS))
def test_each_quantization_format_gives_a_figure_with_and_without_weights(held_back_style, method):
    for pid, point in held_back_style:
        line = {**point, "quantization": {"method": method, "bits": FORMATS[method]}}
        figure(line)
        estimated = figure({k: v for k, v in line.items() if k not in ("weights_gib", "weights_gib_per_rank")})
        assert estimated["weights_estimated"] is True and method in estimated["weights_basis"], pid


def test_a_config_missing_optional_keys_still_gives_a_figure(held_back_style):
    """Drop each config_facts key but the layer count, with and without the checkpoint size."""
    for pid, point in held_back_style:
        facts = point["config_facts"]
        for key in facts:
            if key == "num_hidden_layers":
                continue
            line = {**point, "config_facts": {k: v for k, v in facts.items() if k != key}}
            figure(line)
            figure({k: v for k, v in line.items() if k != "weights_gib"})


def test_a_line_with_only_its_device_and_layer_count_gets_a_figure_naming_its_assumptions():
    out = figure({"gpu_model": "h100", "config_facts": {"num_hidden_layers": 32}})
    assert out["weights_estimated"] and out["assumed"] == ["num_key_value_heads=8, head_dim=128"]
    assert out["version"]["read_as"] is None


def test_mla_sizes_left_out_are_the_stated_assumption():
    facts, assumed = facts_from_point({"num_hidden_layers": 4, "mla": True, "num_attention_heads": 16})
    assert facts.mla is not None and (facts.mla.kv_lora_rank, facts.mla.qk_rope_head_dim) == (
        ASSUMED_MLA["kv_lora_rank"], ASSUMED_MLA["qk_rope_head_dim"])
    assert assumed and "kv_lora_rank=512" in assumed[0] and "qk_rope_head_dim=64" in assumed[0]
    # kv_lora_rank alone marks MLA too, and a stated size is kept
    facts, assumed = facts_from_point({"num_hidden_layers": 4, "kv_lora_rank": 256, "num_attention_heads": 16})
    assert facts.mla.kv_lora_rank == 256 and "kv_lora_rank" not in assumed[0] and facts.layers == ("mla",) * 4


def test_gated_deltanet_sizes_left_out_are_the_stated_assumption():
    cf = {"num_hidden_layers": 8, "attention_layers": {"full": 2, "linear": 6}, "num_attention_heads": 16,
          "num_key_value_heads": 2, "head_dim": 256}
    facts, assumed = facts_from_point(cf)
    keys, values = ASSUMED_GATED_DELTANET["linear_num_key_heads"], ASSUMED_GATED_DELTANET["linear_num_value_heads"]
    assert facts.linear is not None and facts.linear.split_heads == (keys, values)
    assert any("Qwen3NextConfig" in a for a in assumed)
    # the keys a line states are its own; only the rest are assumed
    facts, assumed = facts_from_point({**cf, "linear_num_value_heads": 48})
    assert facts.linear.split_heads == (keys, 48) and "linear_num_value_heads" not in assumed[-1]
    # an attention-only stack assumes nothing of the kind
    assert facts_from_point({"num_hidden_layers": 8, "num_key_value_heads": 2, "head_dim": 64})[1] == []


def test_free_text_is_set_aside_by_name_never_read():
    line = dict(read_points(HELD_BACK_STYLE)[4][1])
    with pytest.raises(PointError):
        predict_point(line)  # the strict reader still refuses it
    read, notes = readable_point(line)
    named = [n.split(" set aside", 1)[0] for n in notes]
    assert named == ["extra_flags[0]", "extra_flags[1]", "engine", "quantization", "config_facts.multimodal"]
    assert read["extra_flags"] == ["--max-num-seqs 64"]
    assert all(key not in read for key in ("engine", "quantization"))
    assert "multimodal" not in read["config_facts"]
    out = figure(line)
    # a value with one parenthesized remark is read, the remark is not
    assert out["set_aside"] == notes and out["version"]["read_as"] == "0.19.0"
    # what the text says is not read: it predicts as the line without those fields
    bare = {k: v for k, v in line.items() if k not in ("engine", "quantization")}
    bare = {**bare, "extra_flags": ["--max-num-seqs 64"], "vllm_version": "0.19.0", "kv_cache_dtype": "fp8",
            "config_facts": {k: v for k, v in line["config_facts"].items() if k != "multimodal"}}
    assert predict_point(bare, use_logged_memory=False)["kv_tokens"] == out["kv_tokens"]


def test_flags_that_vllm_would_not_read_are_set_aside_one_by_one():
    point = unseen(read_points(HELD_BACK_STYLE)[0][1])
    line = {**point, "extra_flags": ["--max-num-batched-tokens (compose)", "--max-num-seqs 32",
                                     "--speculative-config not-json"]}
    with pytest.raises(PointError, match="extra_flags"):
        normalized_point(line)
    read, notes = readable_point(line)
    assert read["extra_flags"] == ["--max-num-seqs 32"]
    assert [n.split(" set aside")[0] for n in notes] == ["extra_flags[0]", "extra_flags[2]"]
    assert all(n.endswith("read as that entry left out") for n in notes)


def test_a_number_field_in_free_text_is_set_aside_and_the_device_table_fills_the_memory():
    point = unseen(read_points(HELD_BACK_STYLE)[0][1])
    out = figure({**point, "gpu_mem_gib": "80 GB-class"})
    assert out["set_aside"][0].startswith("gpu_mem_gib set aside")
    assert out["kv_tokens"] == figure({k: v for k, v in point.items() if k != "gpu_mem_gib"})["kv_tokens"]


def test_the_line_own_structured_field_wins_over_the_table():
    """Held-back lines carry their structured fields: the table fills only what the line leaves
    out or writes as free text."""
    table = {"f.jsonl:1": TableEntry("m", {
        "vllm_version": StructuredField("0.11.0", "r"), "gpu_model": StructuredField("l40s", "r"),
        "kv_cache_dtype": StructuredField("fp8", "r"), "config_facts.multimodal": StructuredField(True, "r")})}
    line = {"model": "m", "vllm_version": "0.19.0", "kv_cache_dtype": "fp8 with e4m3",
            "config_facts": {"num_hidden_layers": 2, "multimodal": "vision tower"}}
    out = structured("f.jsonl:1", line, table)
    assert out["vllm_version"] == "0.19.0"                  # the line's, read as written
    assert out["gpu_model"] == "l40s"                       # left out by the line: the table's
    assert out["kv_cache_dtype"] == "fp8"                   # free text in the line: the table's
    assert out["config_facts"]["multimodal"] is True
    assert reads("vllm_version", "0.19.0") and reads("vllm_version", "0.19.0 (image)")  # a remark, unread
    assert not reads("vllm_version", "latest (0.19.0)") and not reads("kv_cache_dtype", "fp8 with e4m3")
    assert reads("config_facts.multimodal", False) and not reads("config_facts.multimodal", "yes")


# --- the visible reference points, read in place (skipped with the reason when absent) ---


def test_every_visible_point_as_if_held_back_gets_a_figure(structured_points):
    stating = [(pid, unseen(p)) for pid, p in structured_points if states_memory(p)]
    assert len(stating) >= 45
    for pid, point in stating:
        out = figure(point)
        assert not out.get("set_aside"), pid  # the table's fields are all in structured form


def test_every_visible_point_as_written_gets_a_figure_with_its_free_text_set_aside(raw_points):
    """As written, most lines hold free text: set aside, each line still gets a figure."""
    stating = [(pid, unseen(p)) for pid, p in raw_points if states_memory(p)]
    set_aside = 0
    for pid, point in stating:
        set_aside += bool(figure(point).get("set_aside"))
    assert set_aside >= 25


@pytest.mark.parametrize("text", [v[0] for v in VERSIONS])
def test_every_visible_point_reads_each_version_form(structured_points, text):
    for pid, point in structured_points:
        if states_memory(point):
            figure({**unseen(point), "vllm_version": text})


@pytest.mark.parametrize("method", sorted(FORMATS))
def test_every_visible_point_reads_each_quantization_format(structured_points, method):
    for pid, point in structured_points:
        if states_memory(point):
            figure({**unseen(point), "quantization": {"method": method, "bits": FORMATS[method]}})


def test_every_visible_point_survives_any_config_key_left_out(structured_points):
    for pid, point in structured_points:
        if not states_memory(point):
            continue
        line = unseen(point)
        for key in line["config_facts"]:
            if key != "num_hidden_layers":
                figure({**line, "config_facts": {k: v for k, v in line["config_facts"].items() if k != key}})
