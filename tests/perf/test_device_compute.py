"""The device speed table: sourced rows, one home for memory, and the profiles that read it."""

from __future__ import annotations

from servekit.hardware.device_compute import DEVICE_COMPUTE, FORMATS, compute_format, compute_row
from servekit.hardware.device_memory import memory_row


def test_every_row_names_its_datasheet_and_states_figures():
    for row in DEVICE_COMPUTE:
        assert "http" in row.source or row.measured, row.id
        assert row.memory_gb_s > 0 and row.tflops, row.id
        assert set(row.tflops) <= set(FORMATS), row.id
        assert row.link in ("nvlink", "xgmi", "pcie", "ici", "unifiedbus", "none"), row.id


def test_memory_lives_in_the_memory_table_only():
    for row in DEVICE_COMPUTE:
        assert not hasattr(row, "memory_gib")
        if row.memory_id is not None:
            assert memory_row(row.memory_id) is not None, row.id


def test_narrow_formats_fall_back_to_wider_ones():
    a100 = compute_row("a100")
    assert compute_format(a100, "fp8") == "bf16"
    assert compute_format(compute_row("h100"), "fp4") == "fp8"
    assert compute_format(compute_row("b200"), "fp4") == "fp4"
    assert compute_format(compute_row("dgx_spark_gb10"), "bf16") is None


def test_card_count_suffixes_and_display_names_find_the_part(profiles):
    assert profiles["rtx_pro_6000_8x"].compute.id == "rtx_pro_6000"
    assert profiles["rtx_4090_2x"].compute.id == "rtx_4090"
    assert profiles["gb200"].compute.id == "gb200"
    assert profiles["h200"].compute.memory_gb_s == 4800
    assert profiles["xeon6"].compute is None


def test_an_id_is_read_in_either_spelling_of_its_word_joins():
    assert compute_row("h100-sxm") is compute_row("H100_SXM") is compute_row("h100")
    assert compute_row("a100-sxm4-80gb") is compute_row("a100")
    assert compute_row("NVIDIA H100 80GB HBM3") is None  # a product name is not an id


def test_tpu_and_ascend_parts_have_speed_rows_and_say_whose_shares_they_take(profiles):
    from servekit.perf.launch import shares_source

    ironwood = profiles["ironwood"]
    assert ironwood.compute.id == "ironwood" and ironwood.compute.flops("bf16") == 2307e12
    assert compute_row("TPU v7 (Ironwood)").id == "ironwood"
    assert "carried over" in shares_source(ironwood) and "tpu" in shares_source(ironwood)
    ascend = profiles["ascend_950pr"].compute
    assert ascend.memory_gb_s == 1600 and compute_format(ascend, "fp8") == "fp8"
    assert compute_format(ascend, "bf16") is None  # no BF16 figure was stated: no prediction for BF16 weights
    assert "carried over" not in shares_source(profiles["h100"])
    assert "AMD" in shares_source(profiles["mi300x"])
    # a platform whose engine runs compiled graphs of its own shape (Qualcomm's) has no row: perf refuses
    assert profiles["ai100_ultra"].compute is None
