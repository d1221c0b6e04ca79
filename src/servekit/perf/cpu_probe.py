"""Measures this machine's CPU for the speed model; run as a script by the engine environment's
Python (it imports torch, which servekit itself does not need), printing one JSON object.

* memory: the best copy of a ``COPY_MIB`` MiB float32 tensor into another, counted as STREAM's
  Copy counts it (bytes read plus bytes written over the time);
* bf16: the best ``MATMUL_N`` x ``MATMUL_N`` x ``MATMUL_N`` BF16 matrix product (2 n^3 FLOPs over
  the time), on torch's default threads (the threads a vLLM CPU server uses unless told otherwise).

Each runs once untimed first (page faults, thread pool start-up), then at least ``REPEATS`` times
and for at least ``WINDOW_S`` seconds: on a machine shared with other work the best of a longer
window is the machine's own speed, not that of a moment when something else ran.
"""

from __future__ import annotations

import json
import time

COPY_MIB = 256
MATMUL_N = 2048
REPEATS = 5
WINDOW_S = 3.0


def best_seconds(fn) -> float:
    fn()
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < REPEATS or time.perf_counter() - began < WINDOW_S:
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure() -> dict:
    import torch

    src = torch.ones(COPY_MIB * 1024 * 1024 // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    copy_s = best_seconds(lambda: dst.copy_(src))
    a = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16)
    matmul_s = best_seconds(lambda: torch.mm(a, b))
    return {
        "memory_gb_s": 2 * src.numel() * 4 / copy_s / 1e9,
        "bf16_tflops": 2 * MATMUL_N**3 / matmul_s / 1e12,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }


if __name__ == "__main__":
    print(json.dumps(measure()))
