"""The one device table (servekit.hardware.device_memory): the memory vLLM sees per GPU model, used
by the planner's profiles and the measured points alike."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main
from servekit.fit.point_device import point_device
from servekit.fit.versions import VllmRun
from servekit.hardware import DEVICE_MEMORY, build_profile, measured_memory
from servekit.hardware.device_memory import (
    assumed_gib,
    calibration_points,
    capacity_gb,
    fit_reservation,
    memory_row,
    nominal_gb_of,
    nominal_row,
    reservation,
)


def _fit_report(capsys, *args) -> dict:
    main(["fit", "Qwen/Qwen3.8-27B", *args, "--format", "json"])
    return json.loads(capsys.readouterr().out)["report"]


@pytest.mark.parametrize("hardware,seen_gib", [
    ("h100", 79.19), ("a100", 79.15), ("l40s", 44.42), ("h200", 139.8), ("rtx_5090", 31.4),
    ("rtx_5090_2x", 31.4), ("mi300x", 191.98),
])
def test_fit_budgets_the_memory_vllm_sees_times_the_utilization(capsys, hardware, seen_gib):
    report = _fit_report(capsys, "--hardware", hardware)
    assert report["device_memory_gib"] == seen_gib
    assert report["device_memory_source"].startswith("measured: ")
    # no --gpu-memory-utilization: the newest vLLM release's default (0.92 from 0.20)
    assert report["budget_gib"] == pytest.approx(seen_gib * VllmRun(None).default_utilization, rel=0.005)


def test_a_stated_utilization_scales_the_same_device_memory(capsys):
    report = _fit_report(capsys, "--hardware", "l40s", "--gpu-memory-utilization", "0.8")
    assert report["budget_gib"] == pytest.approx(44.42 * 0.8, rel=0.005)


def test_a_part_without_a_log_says_its_memory_is_assumed():
    """No row names a B300: its size less what the measured NVIDIA rows keep (a line over size)."""
    profile = build_profile("b300", {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 8, "vram_gb": 8 * 268})
    assert profile.memory_source.startswith("assumed: ") and "measured NVIDIA rows" in profile.memory_source
    kept = reservation().gib(268)
    assert profile.memory_gib == pytest.approx(268 - kept, abs=0.001) and 0.5 < kept < 5


def test_the_assumed_rule_is_fitted_on_the_measured_rows_and_scored_out_of_them():
    """The reservation line is read off every measured row with a datasheet size (the calibration
    set); refitted without any one row it still predicts that row within 1%."""
    rule = reservation()
    ids = [point[0] for point in calibration_points("NVIDIA")]
    assert set(rule.rows) == set(ids) and len(ids) >= 10
    assert {"h100", "b200", "l40s", "rtx_3090"} <= set(ids)
    for index, (row_id, nominal_gb, _) in enumerate(calibration_points("NVIDIA")):
        rest = fit_reservation("NVIDIA", calibration_points("NVIDIA")[:index] + calibration_points("NVIDIA")[index + 1:])
        capacity = capacity_gb(nominal_row(row_id))
        measured = memory_row(row_id).memory_gib
        assert abs(capacity - rest.gib(nominal_gb) - measured) / measured < 0.01, row_id


def test_ecc_on_gddr_keeps_a_sixteenth():
    """A data-centre GDDR card keeps ECC on: an A40 is priced like the measured L40 and L40S, not
    like a 48 GB card without ECC (an RTX A6000 reports 47.54 GiB)."""
    a40 = point_device({"gpu_model": "a40"}, {}, 1)[0]
    assert a40.profile.memory_source.startswith("assumed: ") and "ECC" in a40.profile.memory_source
    assert a40.memory_gib == pytest.approx(memory_row("l40").memory_gib, rel=0.01)
    assert assumed_gib(48) == pytest.approx(memory_row("rtx_a6000").memory_gib, rel=0.01)
    assert assumed_gib(48, ecc=True) == pytest.approx(assumed_gib(48) - 3, abs=0.01)


def test_the_inverse_gives_back_the_nominal_size():
    for nominal in (24, 80, 141, 268):
        assert nominal_gb_of(assumed_gib(nominal)) == pytest.approx(nominal, abs=0.002)
    assert nominal_gb_of(assumed_gib(256, amd=True), amd=True) == pytest.approx(256, abs=0.002)


def test_a_row_of_another_memory_variant_is_not_taken():
    """An H100 NVL (94 GB) profile named "H100 NVL" takes its own row, not the 80 GB H100's."""
    nvl = build_profile("h100_nvl", {"brand": "NVIDIA", "generation": "hopper", "display_name": "H100 NVL",
                                     "gpu_count": 2, "vram_gb": 188})
    assert nvl.memory_source.startswith("measured: ") and nvl.memory_gib == memory_row("h100_nvl").memory_gib
    big = build_profile("h100_big", {"brand": "NVIDIA", "generation": "hopper", "display_name": "H100",
                                     "gpu_count": 1, "vram_gb": 120})
    assert big.memory_source.startswith("assumed: "), "a row far below the nominal size names another part"


def test_planner_and_points_read_the_same_table():
    for row in DEVICE_MEMORY:
        assert row.source and row.memory_gib > 0
    for name in ("NVIDIA H100 80GB HBM3", "NVIDIA L40S", "NVIDIA GeForce RTX 5090", "AMD Instinct MI300X"):
        row = measured_memory(name)
        assert row is not None and point_device({"gpu_model": row.id}, {}, 1)[0].memory_gib == row.memory_gib


def test_non_gpu_profiles_take_no_gpu_row():
    cpu = build_profile("xeon6", {"brand": "Intel", "kind": "cpu", "platform": "cpu", "display_name": "Xeon 6",
                                  "gpu_count": 4, "vram_gb": 1024})
    assert cpu.memory_source.startswith("assumed: ")
