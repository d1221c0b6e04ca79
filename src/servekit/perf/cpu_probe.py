"""Measures this machine's CPU for the speed model; run as a script by the engine environment's
Python (it imports torch and, where it can, vLLM, which servekit itself does not need), printing
one JSON object.

* memory: BF16 weights streamed through the linear kernel a vLLM CPU server runs its projections
  with, at a decode step's few rows (``DECODE_ROWS``), over sets of 2048 x 2048 matrices of
  ``STREAM_SIZES_MIB`` MiB and of twice the last-level cache (at least the largest size, at most
  ``STREAM_MAX_MIB``): the rate each size of weights streams at, read again every step as the
  server's decode steps read a model's (``stream_gb_s``). A set the caches hold part of streams
  faster: on one Intel Xeon core reporting a 480 MiB L3, 64 MiB streamed at 23 GB/s, 104 MiB at
  17 and 192 MiB or more at 12.4. ``memory_gb_s`` is the largest set's, from memory alone. The
  kernel is the one vLLM's own dispatch picks for such a layer
  (``vllm.model_executor.layers.utils.dispatch_cpu_unquantized_gemm``: oneDNN with its weights
  packed where the CPU has it, zentorch or SGLang's kernel where vLLM prefers them,
  ``torch.nn.functional.linear`` otherwise); without vLLM, or where its dispatch fails,
  ``torch.nn.functional.linear`` (``kernel`` names the one that ran).
  A plain copy measures another thing: on one Intel Xeon core a 256 MiB float32 copy moved 14.5
  GB/s (bytes read + written, STREAM Copy) while oneDNN's packed kernel streamed 960 MiB of
  weights at 12.7 GB/s, and 103 MB of a small Llama's at 21-22 GB/s against 10-12 for
  ``torch.nn.functional.linear``; the copy is still reported (``copy_gb_s``);
* bf16: the same kernel over ``MATMUL_N`` rows of one ``MATMUL_N`` x ``MATMUL_N`` BF16 matrix
  (2 n^3 FLOPs over the time): a prompt's projections. (A plain BF16 ``torch.mm`` takes another
  path on CPUs without BF16 instructions, about 30x slower than either, which the server never
  runs.)

Both run on the CPUs a vLLM CPU server of one rank computes on (``engine_cpus``), with one thread
per CPU, as its worker does: with ``VLLM_CPU_OMP_THREADS_BIND=auto`` (the default) vLLM 0.32.0
binds the worker's OpenMP threads to one logical CPU per physical core of the first NUMA node
(x86: the last sibling; Arm: every CPU) and keeps ``reserve_cpu_num`` of them, the local world size
(1), for its API server and engine core processes (vllm/utils/ompmultiprocessing.py,
``OMPProcessManager._get_autobind_cpu_ids``). On a 2-CPU machine the worker computes on one CPU.

Each runs once untimed first (page faults, thread pool start-up, the kernel's weight packing),
then at least ``REPEATS`` times and for at least ``WINDOW_S`` seconds (each weight set and the
copy: ``STREAM_WINDOW_S``). The figures are the median
time of the window (what the server's steps get now, with whatever else runs on the machine) and
the best one (the machine's own speed, when nothing else ran for a moment).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

COPY_MIB = 256
STREAM_SIZES_MIB = (16, 32, 64, 128, 256)
STREAM_MAX_MIB = 1024
STREAM_WINDOW_S = 1.5
DECODE_ROWS = 4
MATMUL_N = 2048
MATRIX_MIB = MATMUL_N * MATMUL_N * 2 // 1024**2
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


def timed(fn, window_s: float = WINDOW_S) -> list[float]:
    fn()
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < REPEATS or time.perf_counter() - began < window_s:
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def last_level_cache_bytes(cpu: int) -> int:
    """The largest cache ``cpu`` reads through (sysfs ``cache/index*/size``, e.g. ``491520K``); 0 unread."""
    sizes = []
    for entry in (SYSFS / f"cpu{cpu}" / "cache").glob("index[0-9]*"):
        try:
            text = (entry / "size").read_text().strip().upper()
        except OSError:
            continue
        scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes, default=0)


def stream_sizes_mib(cache: int) -> tuple[int, ...]:
    """The weight sets streamed, MiB: ``STREAM_SIZES_MIB`` and twice the last-level cache (at
    least the largest of them, at most ``STREAM_MAX_MIB``), rounded up to whole matrices."""
    largest = min(max(STREAM_SIZES_MIB[-1], -(-2 * cache // 1024**2)), STREAM_MAX_MIB)
    return tuple(sorted({*STREAM_SIZES_MIB, -(-largest // MATRIX_MIB) * MATRIX_MIB}))


def server_linear(weight):
    """(the function vLLM CPU's dispatch gives a linear layer of ``weight``, its name);
    ``torch.nn.functional.linear`` where this environment's vLLM has no such dispatch or it fails."""
    import torch

    def plain(w):
        return (lambda x: torch.nn.functional.linear(x, w)), "torch.nn.functional.linear"

    try:
        from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm
    except Exception:  # noqa: BLE001 - no vLLM, or one without the CPU dispatch
        return plain(weight)
    layer = torch.nn.Module()
    layer.weight = torch.nn.Parameter(weight, requires_grad=False)
    del weight  # a kernel that packs the weights drops the layer's own, as the server's layers do
    try:
        dispatch_cpu_unquantized_gemm(layer, remove_weight=True)
    except Exception:  # noqa: BLE001 - a release whose dispatch takes other arguments
        return plain(layer.weight)
    return (lambda x: layer.cpu_linear(x, layer.weight, None)), "vllm dispatch_cpu_unquantized_gemm"


def measure() -> dict:
    cpus = engine_cpus()
    os.sched_setaffinity(0, cpus)
    import torch

    torch.set_num_threads(len(cpus))
    cache = last_level_cache_bytes(cpus[0])
    linears: list = []
    decode = torch.ones(DECODE_ROWS, MATMUL_N, dtype=torch.bfloat16)
    stream: dict[str, float] = {}
    best_stream = 0.0
    for size in stream_sizes_mib(cache):
        while len(linears) * MATRIX_MIB < size:
            fn, kernel = server_linear(torch.ones(MATMUL_N, MATMUL_N, dtype=torch.bfloat16))
            linears.append(fn)
        times = timed(lambda: [fn(decode) for fn in linears], STREAM_WINDOW_S)
        streamed = len(linears) * MATRIX_MIB * 1024**2
        stream[str(size)] = streamed / statistics.median(times) / 1e9
        best_stream = streamed / min(times) / 1e9
    linears.clear()
    prompt = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16)
    product, _ = server_linear(torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16))
    matmul_s = timed(lambda: product(prompt))
    src = torch.ones(COPY_MIB * 1024 * 1024 // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    copy_s = timed(lambda: dst.copy_(src), STREAM_WINDOW_S)
    matmul_flops, copy_bytes = 2 * MATMUL_N**3, 2 * src.numel() * 4
    return {
        "memory_gb_s": stream[max(stream, key=int)],
        "bf16_tflops": matmul_flops / statistics.median(matmul_s) / 1e12,
        "best_memory_gb_s": best_stream,
        "best_bf16_tflops": matmul_flops / min(matmul_s) / 1e12,
        "copy_gb_s": copy_bytes / statistics.median(copy_s) / 1e9,
        "kernel": kernel,
        "stream_gb_s": stream,
        "last_level_cache_mib": cache / 1024**2,
        "threads": torch.get_num_threads(),
        "cpus": cpus,
        "torch": torch.__version__,
        "load_average": list(os.getloadavg()),
    }


if __name__ == "__main__":
    print(json.dumps(measure()))
