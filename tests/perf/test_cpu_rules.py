"""The CPU parts of the speed model: the measured CPU row (cached per machine), the CPU backend's
scheduler defaults, and the measured-vs-predicted comparison."""

from __future__ import annotations

import json
import pytest

from servekit.fit.hardware import Device
from servekit.fit.scheduler import v1_defaults
from servekit.fit.versions import VllmRun
from servekit.hardware import LOCAL, build_profile
from servekit.perf import local_cpu
from servekit.perf.compare import all_inside, compare
from servekit.perf.constants import constant
from servekit.perf.launch import device_row, overhead_key, rates_for
from servekit.perf.shape import ModelShape

CPU_ENTRY = {"brand": "AMD", "display_name": "this machine (Test CPU)", "generation": "cpu", "gpu_count": 1,
             "kind": "cpu", "platform": "cpu", "vram_gb": 20.0, "multi_node": False}
FIGURES = {"memory_gb_s": 25.0, "bf16_tflops": 0.4, "threads": 2, "torch": "2.13.0+cpu"}
TINY = ModelShape(params_total=1e6, params_active=1e6, expert_params=0.0, experts=0, experts_per_token=0, layers=2,
                  hidden=256, heads=4, attention_dim=128, kv_bytes_per_token=1024.0, weights_format="bf16")


class Counting:
    def __init__(self, figures: dict):
        self.figures, self.calls = figures, 0

    def __call__(self) -> dict:
        self.calls += 1
        return dict(self.figures)


def test_a_machine_is_measured_once_and_the_figures_are_cached():
    measure = Counting(FIGURES)
    first = local_cpu.cpu_speed("this machine (Test CPU)", measure)
    again = local_cpu.cpu_speed("this machine (Test CPU)", measure)
    assert measure.calls == 1 and first == again
    stored = json.loads(local_cpu.cache_file().read_text())
    assert stored["figures"] == FIGURES and stored["machine"].startswith("this machine (Test CPU)")


def test_another_machine_or_a_broken_cache_measures_again():
    measure = Counting(FIGURES)
    local_cpu.cpu_speed("this machine (Test CPU)", measure)
    local_cpu.cpu_speed("this machine (Other CPU)", measure)
    assert measure.calls == 2
    local_cpu.cache_file().write_bytes(b"{not json")  # a broken cache file
    local_cpu.cpu_speed("this machine (Other CPU)", measure)
    assert measure.calls == 3


def test_the_measured_row_states_its_figures_and_method():
    row = local_cpu.cpu_row(local_cpu.cpu_speed("this machine (Test CPU)", Counting(FIGURES)))
    assert row.memory_gb_s == 25.0 and row.flops("bf16") == pytest.approx(0.4e12)
    assert "dispatch picks" in row.measured and "25.0 GB/s" in row.source and row.link == "none"
    assert row.stream_gb_s == ()  # no sizes measured: every size streams at memory_gb_s
    assert row.memory_for(1e6) == row.memory_for(1e12) == 25.0


CURVE = {"16": 40.0, "64": 30.0, "256": 12.0, "960": 12.5}


def test_weights_the_caches_hold_stream_at_the_rate_measured_for_their_size():
    row = local_cpu.cpu_row({"machine": "m", "figures": {**FIGURES, "memory_gb_s": 12.5, "stream_gb_s": CURVE}})
    assert row.stream_gb_s == ((16.0, 40.0), (64.0, 30.0), (256.0, 12.0), (960.0, 12.5))
    mib = 1024**2
    assert row.memory_for(4 * mib) == 40.0 and row.memory_for(64 * mib) == 30.0  # below the smallest: its rate
    assert row.memory_for(32 * mib) == pytest.approx(40.0 - 10.0 / 2)  # halfway in log2(size) from 16 to 64
    assert row.memory_for(128 * mib) == pytest.approx(21.0)
    assert row.memory_for(8192 * mib) == 12.5  # beyond the largest: from memory alone


def test_a_rank_streams_its_share_of_the_weights_at_that_sizes_rate():
    local_cpu.cpu_speed("this machine (Test CPU)", Counting({**FIGURES, "memory_gb_s": 12.5, "stream_gb_s": CURVE}))
    profile = build_profile(LOCAL, CPU_ENTRY)
    big = ModelShape(params_total=64 * 1024**2, params_active=64 * 1024**2, expert_params=0.0, experts=0,
                     experts_per_token=0, layers=2, hidden=256, heads=4, attention_dim=128,
                     kv_bytes_per_token=1024.0, weights_format="bf16")  # 128 MiB of BF16 weights
    share = constant("bandwidth_fraction.vllm_cpu")
    assert rates_for(profile, big, "vllm").memory == pytest.approx(21.0e9 * share)
    assert rates_for(profile, big, "vllm", ranks=2).memory == pytest.approx(30.0e9 * share)  # 64 MiB each


def test_unreadable_stream_sizes_are_left_out():
    figures = {"stream_gb_s": {"16": 40.0, "x": 3.0, "32": None, "64": -1.0, "128": 20.0}}
    assert local_cpu.stream_curve(figures) == ((16.0, 40.0), (128.0, 20.0))


def test_hardware_local_on_a_cpu_takes_the_measured_row_at_the_cpu_backends_shares():
    local_cpu.cpu_speed("this machine (Test CPU)", Counting(FIGURES))
    profile = build_profile(LOCAL, CPU_ENTRY)
    assert device_row(profile).id == local_cpu.ROW_ID
    rates = rates_for(profile, TINY, "vllm")
    assert rates.memory == pytest.approx(25e9 * constant("bandwidth_fraction.vllm_cpu"))
    assert rates.flops == pytest.approx(0.4e12 * constant("flops_fraction.vllm_cpu"))
    assert overhead_key("vllm", profile) == "vllm_cpu"
    assert rates.step_s > 0 and rates.request_s >= 0
    assert rates.seq_layer_s == 0.0 and rates.token_s > 0  # per token per layer, not per sequence


def test_a_named_cpu_profile_is_not_this_machine():
    from servekit.perf.launch import PerfError

    with pytest.raises(PerfError, match="no speed figures"):
        device_row(build_profile("xeon6", {**CPU_ENTRY, "display_name": "Xeon 6"}))


def test_a_doubled_measured_bandwidth_halves_the_weight_term():
    slow = build_profile(LOCAL, CPU_ENTRY)
    local_cpu.cpu_speed("this machine (Test CPU)", Counting(FIGURES))
    one = rates_for(slow, TINY, "vllm")
    local_cpu.cache_file().unlink()
    local_cpu.cpu_speed("this machine (Test CPU)", Counting({**FIGURES, "memory_gb_s": 50.0}))
    two = rates_for(slow, TINY, "vllm")
    assert two.memory == pytest.approx(2 * one.memory)


def test_vllm_cpu_scheduler_defaults_scale_with_the_world():
    cpu = Device(build_profile(LOCAL, CPU_ENTRY))
    assert v1_defaults(cpu, VllmRun("0.32.0", {}, "cpu")) == (2048, 128)
    assert v1_defaults(cpu, VllmRun("0.32.0", {}, "cpu"), world_size=2) == (4096, 256)
    assert v1_defaults(cpu, VllmRun("0.32.0", {}, "cpu"), offline=True) == (4096, 256)


PREDICTED = {"output_throughput_tok_s": 100.0, "ttft_ms": {"median": 10.0, "p99": 20.0},
             "tpot_ms": {"median": 2.0, "p99": 3.0},
             "interval80": {"output_throughput_tok_s": [80.0, 160.0], "ttft_ms": {"median": [7.0, 19.0],
                                                                                  "p99": [14.0, 38.0]},
                            "tpot_ms": {"median": [1.3, 2.7], "p99": [2.0, 4.0]}}}


def test_every_figure_is_compared_with_its_own_interval():
    measured = {"output_throughput_tok_s": 160.0, "ttft_ms": {"median": 6.9, "p99": 30.0},
                "tpot_ms": {"median": 2.0, "p99": 4.5}}
    got = compare(measured, PREDICTED)
    assert set(got) == {"output_throughput_tok_s", "ttft_ms.median", "ttft_ms.p99", "tpot_ms.median", "tpot_ms.p99"}
    assert got["output_throughput_tok_s"]["inside"]  # the bound itself is inside
    assert not got["ttft_ms.median"]["inside"] and got["ttft_ms.median"]["ratio"] == pytest.approx(0.69)
    assert got["ttft_ms.p99"]["inside"] and got["tpot_ms.median"]["inside"]
    assert not got["tpot_ms.p99"]["inside"] and got["tpot_ms.p99"]["interval80"] == [2.0, 4.0]
    assert not all_inside(got)


def test_a_prediction_inside_on_every_figure_is_inside():
    measured = {"output_throughput_tok_s": 100.0, "ttft_ms": {"median": 10.0, "p99": 20.0},
                "tpot_ms": {"median": 2.0, "p99": 3.0}}
    assert all_inside(compare(measured, PREDICTED))


def test_a_fresh_measurement_replaces_the_cached_one():
    measure = Counting(FIGURES)
    local_cpu.cpu_speed("this machine (Test CPU)", measure)
    now = local_cpu.cpu_speed("this machine (Test CPU)", Counting({**FIGURES, "memory_gb_s": 9.0}), fresh=True)
    assert now["figures"]["memory_gb_s"] == 9.0
    assert local_cpu.cpu_speed("this machine (Test CPU)", measure)["figures"]["memory_gb_s"] == 9.0


def test_the_probe_streams_past_the_last_level_cache(tmp_path, monkeypatch):
    from servekit.perf import cpu_probe

    for index, size in enumerate(("48K", "2048K", "491520K")):
        (tmp_path / "cpu0" / "cache" / f"index{index}").mkdir(parents=True)
        (tmp_path / "cpu0" / "cache" / f"index{index}" / "size").write_text(f"{size}\n")
    monkeypatch.setattr(cpu_probe, "SYSFS", tmp_path)
    assert cpu_probe.last_level_cache_bytes(0) == 480 * 1024**2
    assert cpu_probe.last_level_cache_bytes(1) == 0  # unreadable: no cache counted
    assert cpu_probe.stream_sizes_mib(480 * 1024**2) == (16, 32, 64, 128, 256, 960)
    assert cpu_probe.stream_sizes_mib(32 * 1024**2) == (16, 32, 64, 128, 256)  # a small cache: 256 MiB is past it
    assert cpu_probe.stream_sizes_mib(4 * 1024**3)[-1] == cpu_probe.STREAM_MAX_MIB
    assert cpu_probe.stream_sizes_mib(510 * 1024**2)[-1] == 1024  # 1,020 MiB rounds up to whole 8 MiB matrices


def _topology(root, cores: dict[int, tuple[int, int]]):
    """A /sys/devices/system/cpu tree: cpu -> (NUMA node, physical core)."""
    for cpu, (node, core) in cores.items():
        (root / f"cpu{cpu}" / f"node{node}").mkdir(parents=True)
        topo = root / f"cpu{cpu}" / "topology"
        topo.mkdir()
        (topo / "physical_package_id").write_text("0\n")
        (topo / "core_id").write_text(f"{core}\n")


@pytest.mark.parametrize(("cores", "machine", "want"), [
    ({0: (0, 0), 1: (0, 1)}, "x86_64", [0]),  # two cores: one for the worker, one kept for the servers
    ({0: (0, 0), 1: (0, 1), 2: (0, 0), 3: (0, 1)}, "x86_64", [2]),  # SMT: the last sibling of each core
    ({0: (0, 0), 1: (0, 1), 2: (1, 2), 3: (1, 3)}, "aarch64", [0]),  # the first NUMA node only
    ({0: (0, 0), 1: (0, 1), 2: (0, 2), 3: (0, 3)}, "aarch64", [0, 1, 2]),
    ({0: (0, 0)}, "x86_64", [0]),  # one CPU: nothing to keep apart
])
def test_the_probe_measures_on_the_cpus_vllm_cpu_binds_its_worker_to(tmp_path, monkeypatch, cores, machine, want):
    from servekit.perf import cpu_probe

    _topology(tmp_path, cores)
    monkeypatch.setattr(cpu_probe, "SYSFS", tmp_path)
    monkeypatch.setattr(cpu_probe.os, "sched_getaffinity", lambda pid: set(cores))
    monkeypatch.setattr(cpu_probe.platform, "machine", lambda: machine)
    assert cpu_probe.engine_cpus() == want
