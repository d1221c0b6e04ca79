"""Measures this machine's CPU for the speed model; run as a script by the engine environment's
Python (it imports torch, which servekit itself does not need), printing one JSON object.

* memory: a copy of a ``COPY_MIB`` MiB float32 tensor into another, counted as STREAM's Copy
  counts it (bytes read plus bytes written over the time);
* bf16: a linear layer of ``MATMUL_N`` x ``MATMUL_N`` BF16 weights over ``MATMUL_N`` rows (2 n^3
  FLOPs over the time), computed by ``torch.nn.functional.linear`` as vLLM CPU's linear layers are:
  its oneDNN kernel where the CPU has BF16 instructions, torch's own where it has none (the server
  logs "fallback to torch linear"). A plain BF16 ``torch.mm`` takes another path there, about 30x
  slower than either (0.33 against 10 GFLOPS on one AVX2-only core), which the server never runs.

Both run on the CPUs a vLLM CPU server of one rank computes on (``engine_cpus``), with one thread
per CPU, as its worker does: with ``VLLM_CPU_OMP_THREADS_BIND=auto`` (the default) vLLM 0.32.0
binds the worker's OpenMP threads to one logical CPU per physical core of the first NUMA node
(x86: the last sibling; Arm: every CPU) and keeps ``reserve_cpu_num`` of them, the local world size
(1), for its API server and engine core processes (vllm/utils/ompmultiprocessing.py,
``OMPProcessManager._get_autobind_cpu_ids``). On a 2-CPU machine the worker computes on one CPU.

Each runs once untimed first (page faults, thread pool start-up), then at least ``REPEATS`` times
and for at least ``WINDOW_S`` seconds. The figures are the median time of the window (what the
server's steps get now, with whatever else runs on the machine) and the best one (the machine's
own speed, when nothing else ran for a moment).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

COPY_MIB = 256
MATMUL_N = 2048
REPEATS = 5
WINDOW_S = 3.0
RESERVED = 1
"""CPUs vLLM CPU keeps off its worker for one rank (``reserve_cpu_num`` = local world size 1)."""
SYSFS = Path("/sys/devices/system/cpu")


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _node(cpu: int) -> int:
    nodes = sorted(int(p.name[4:]) for p in (SYSFS / f"cpu{cpu}").glob("node[0-9]*"))
    return nodes[0] if nodes else 0


def engine_cpus() -> list[int]:
    """The CPUs vLLM CPU's ``auto`` binding gives the worker of one rank (see the module's text);
    every allowed CPU where the topology cannot be read."""
    allowed = sorted(os.sched_getaffinity(0))
    node = min(_node(c) for c in allowed)
    cores: dict[tuple[int | None, int | None], list[int]] = {}
    for cpu in (c for c in allowed if _node(c) == node):
        topo = SYSFS / f"cpu{cpu}" / "topology"
        cores.setdefault((_read_int(topo / "physical_package_id"), _read_int(topo / "core_id")), []).append(cpu)
    smt_last = platform.machine().lower() in ("x86_64", "amd64", "i686", "s390x")
    chosen = sorted(c for cpus in cores.values() for c in (sorted(cpus)[-1:] if smt_last else cpus))
    return chosen[:-RESERVED] if len(chosen) > RESERVED else chosen or allowed


def timed(fn) -> list[float]:
    fn()
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < REPEATS or time.perf_counter() - began < WINDOW_S:
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def measure() -> dict:
    cpus = engine_cpus()
    os.sched_setaffinity(0, cpus)
    import torch

    torch.set_num_threads(len(cpus))
    src = torch.ones(COPY_MIB * 1024 * 1024 // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    copy_s = timed(lambda: dst.copy_(src))
    rows = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16)
    weight = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16)
    matmul_s = timed(lambda: torch.nn.functional.linear(rows, weight))
    copy_bytes, matmul_flops = 2 * src.numel() * 4, 2 * MATMUL_N**3
    return {
        "memory_gb_s": copy_bytes / statistics.median(copy_s) / 1e9,
        "bf16_tflops": matmul_flops / statistics.median(matmul_s) / 1e12,
        "best_memory_gb_s": copy_bytes / min(copy_s) / 1e9,
        "best_bf16_tflops": matmul_flops / min(matmul_s) / 1e12,
        "threads": torch.get_num_threads(),
        "cpus": cpus,
        "torch": torch.__version__,
        "load_average": list(os.getloadavg()),
    }


if __name__ == "__main__":
    print(json.dumps(measure()))
