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


def test_intel_arc_parts_have_speed_rows_with_their_vendor_and_carried_over_shares(profiles):
    from servekit.hardware.device_compute import row_brand
    from servekit.perf.launch import shares_source

    b60, b70 = profiles["arc_pro_b60"], profiles["arc_pro_b70"]
    assert b60.compute.id == "arc_pro_b60" and b60.compute.memory_gb_s == 456
    assert b70.compute.id == "arc_pro_b70" and b70.compute.memory_gb_s == 608
    assert b70.compute.flops("bf16") > b60.compute.flops("bf16") and compute_format(b60.compute, "fp8") != "fp8"
    assert row_brand(b60.compute) == row_brand(b70.compute) == "Intel"
    assert "carried over" in shares_source(b60) and "xpu" in shares_source(b60)


def test_a_part_only_the_speed_table_names_takes_its_memory_from_the_one_memory_module(profiles):
    """A measured point may name a part no taxonomy entry has (an H800, an RTX 3090): its memory is
    the memory table's measured row, else its datasheet size at the assumed usable share, and the
    profile says which; a part with neither has no pool limit and says so."""
    from servekit.hardware.device_memory import NOMINAL_MEMORY, assumed_gib, memory_row, nominal_row
    from servekit.perf.launch import shares_source
    from servekit.perf.points import point_profile

    for row in NOMINAL_MEMORY:
        assert compute_row(row.id) is not None and row.gb > 0, row.id
    h800 = point_profile("h800", profiles)
    assert h800.memory_gib == assumed_gib(80) and h800.memory_source.startswith("assumed")
    assert "nvidia.cn/data-center/h800" in h800.memory_source
    assert h800.compute.link_gb_s == 200 and h800.compute.flops("fp8") == compute_row("h100").flops("fp8")
    assert point_profile("H800-SXM", profiles).compute.id == "h800"
    rtx3090 = point_profile("rtx_3090", profiles)
    assert rtx3090.memory_gib == memory_row("rtx_3090").memory_gib and rtx3090.memory_source.startswith("measured")
    assert rtx3090.generations == ("ampere",)  # the Ampere share of the datasheet FLOPs
    assert nominal_row("h200").gb == 141  # a measured row's datasheet size, which prices the assumed rule
    v5e = point_profile("v5e", profiles)
    assert v5e.platform == "tpu" and "carried over" in shares_source(v5e)
    assert v5e.memory_gib == memory_row("tpu_v5e").memory_gib and v5e.memory_source.startswith("measured")
    assert point_profile("gb200_nvl4", profiles).memory_gib == assumed_gib(186)
    assert point_profile("mi355x", profiles).memory_gib > 0  # the taxonomy's entry, not this path
    unknown = point_profile("tpu7x", profiles)  # Google states Ironwood's memory in GiB: not a nominal GB row
    assert unknown.memory_source.startswith("none") and unknown.memory_gib == 0.0


def test_parts_without_bf16_give_their_fp16_figure_and_older_links(profiles):
    """Volta and Turing parts (V100, T4) have no BF16: their 16-bit row is the FP16 tensor figure,
    the format vLLM runs 16-bit weights in there; their memory is the datasheet size, assumed usable
    at the stated share, and a T4 talks over PCIe Gen3."""
    from servekit.hardware.device_compute import PCIE3, PCIE4
    from servekit.hardware.device_memory import assumed_gib
    from servekit.perf.points import point_profile

    t4, v100, a30 = compute_row("tesla_t4"), compute_row("V100-SXM2"), compute_row("a30")
    assert t4.id == "t4" and t4.flops("bf16") == 65e12 and t4.link_gb_s == PCIE3 == PCIE4 / 2
    assert compute_format(t4, "fp8") == "bf16" and "no BF16" in t4.source
    assert v100.id == "v100" and v100.flops("bf16") == 125e12 and v100.link == "nvlink" and v100.link_gb_s == 150
    assert compute_row("v100_pcie").flops("bf16") == 112e12 and a30.flops("bf16") == 165e12
    assert point_profile("t4", profiles).memory_gib == assumed_gib(16, ecc=True)  # GDDR6 with ECC on
    assert point_profile("v100_16gb", profiles).memory_gib < point_profile("v100", profiles).memory_gib
    assert not point_profile("t4", profiles).at_least("ampere")
