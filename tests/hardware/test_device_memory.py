"""The one device table (servekit.hardware.device_memory): the memory vLLM sees per GPU model, used
by the planner's profiles and the measured points alike."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main
from servekit.fit.point_device import point_device
from servekit.hardware import DEVICE_MEMORY, build_profile, measured_memory


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
    assert report["budget_gib"] == pytest.approx(seen_gib * 0.9, rel=0.005)


def test_a_stated_utilization_scales_the_same_device_memory(capsys):
    report = _fit_report(capsys, "--hardware", "l40s", "--gpu-memory-utilization", "0.8")
    assert report["budget_gib"] == pytest.approx(44.42 * 0.8, rel=0.005)


def test_a_part_without_a_log_says_its_memory_is_assumed():
    profile = build_profile("b200", {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 8, "vram_gb": 1440})
    assert profile.memory_source.startswith("assumed: ")
    assert profile.memory_gib == pytest.approx(180 * 31.4 / 32, abs=0.001)


def test_a_row_of_another_memory_variant_is_not_taken():
    """An H100 NVL (94 GB) profile named "H100 NVL" is not priced as the 80 GB H100 of the table."""
    nvl = build_profile("h100_nvl", {"brand": "NVIDIA", "generation": "hopper", "display_name": "H100 NVL",
                                     "gpu_count": 2, "vram_gb": 188})
    assert nvl.memory_source.startswith("assumed: ")
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
