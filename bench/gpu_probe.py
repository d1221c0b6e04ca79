"""What one NVIDIA GPU achieves, measured with PyTorch alone, for the speed model's device facts.

Usage: python bench/gpu_probe.py [--out FILE.json]      (needs torch with CUDA; nothing else)

Prints one JSON object (and writes it to ``--out``):

* ``memory``: ``torch.cuda.mem_get_info`` right after the CUDA context is made: the total vLLM
  budgets ``--gpu-memory-utilization`` against (``servekit.hardware.device_memory``), and what the
  context alone takes; then again after a cuBLAS product (its workspace) and nvidia-smi's total;
* ``copy_gb_s``: a device-to-device copy of ``COPY_GIB`` (bytes read + written per second);
* ``stream_gb_s``: BF16 weights (``STREAM_SHAPE`` matrices, ``STREAM_GIB`` of them, many times the
  L2) streamed through ``torch.nn.functional.linear`` (cuBLAS) at a decode step's rows
  (``DECODE_ROWS``): weight bytes per second, as a decode step reads a model's weights;
* ``gemm_tflops``: dense products of ``GEMM_ROWS`` x K by K x N (``GEMM_KN``) with random data in
  BF16 (``torch.mm``) and FP8 e4m3 with per-tensor scales (``torch._scaled_mm``, BF16 out): a
  prompt's projections;
* ``decode_attention_gb_s``: one decode token per sequence attending a BF16 KV cache through
  ``torch.nn.functional.scaled_dot_product_attention`` (GQA): KV bytes read per second;
* ``stream_fp8_gb_s``: FP8 e4m3 weights streamed through ``torch._scaled_mm`` at the decode rows;
* ``grouped_shapes_gb_s``: routed-expert products at ``EXPERT_TOKENS`` tokens per expert, experts of
  ``EXPERT_SHAPES`` in BF16 (``torch._grouped_mm``) and FP8 (``torch._scaled_grouped_mm``, row-wise
  scales): expert weight bytes per second. (The first two recorded runs, from an earlier version
  of this script, hold the first shape's BF16 figures alone, as ``grouped_gb_s``.)

Each figure is the median of a window of CUDA-event-timed repetitions after a warm-up (at least
``REPEATS`` and ``WINDOW_S`` seconds), with the best one beside it. Fractions of the datasheet are
left to the reader of the file (``servekit.hardware.device_compute`` holds the datasheet rows).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from servekit.atomic import write_text_atomic  # noqa: E402 - standard library only, as this probe needs

REPEATS = 10
WINDOW_S = 0.4
COPY_GIB = 4
STREAM_SHAPE = (8192, 8192)
STREAM_GIB = 8
DECODE_ROWS = (1, 8, 32, 64, 128, 256)
GEMM_KN = ((8192, 8192), (8192, 28672), (28672, 8192))
GEMM_ROWS = (256, 1024, 4096, 8192)
ATTENTION = {"batch": 64, "query_heads": 32, "kv_heads": 8, "head_dim": 128, "context": (1024, 4096, 16384)}
EXPERT_TOKENS = (1, 4, 16, 64)
EXPERT_SHAPES = ((64, 4096, 3072), (64, 7168, 4096), (128, 2048, 1536))
"""(experts, hidden, gate + up width) of the grouped products: a mid-sized MoE's, a DeepSeek-V3
expert's and a Qwen3-30B-A3B expert's."""


def timed_ms(torch, fn) -> list[float]:
    """CUDA-event times (ms) of ``fn`` after one untimed run."""
    fn()
    torch.cuda.synchronize()
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < REPEATS or time.perf_counter() - began < WINDOW_S:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def rate(amount: float, times_ms: list[float], scale: float) -> dict[str, float]:
    """``amount`` per second over the median and the best time, divided by ``scale``."""
    return {"median": round(amount / (statistics.median(times_ms) / 1e3) / scale, 2),
            "best": round(amount / (min(times_ms) / 1e3) / scale, 2)}


def smi(query: str) -> str:
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, check=True, timeout=30).stdout.splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        return ""


def memory(torch) -> dict:
    free, total = torch.cuda.mem_get_info(0)
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    torch.mm(a, a)
    torch.cuda.synchronize()
    free_after, _ = torch.cuda.mem_get_info(0)
    reserved = torch.cuda.memory_reserved(0)
    del a
    return {"total_gib": round(total / 2**30, 3), "context_gib": round((total - free) / 2**30, 3),
            "non_torch_after_cublas_gib": round((total - free_after - reserved) / 2**30, 3),
            "nvidia_smi_total_mib": smi("memory.total")}


def copy(torch) -> dict:
    src = torch.ones(COPY_GIB * 2**30 // 2, dtype=torch.bfloat16, device="cuda")
    dst = torch.empty_like(src)
    out = rate(2 * src.numel() * 2, timed_ms(torch, lambda: dst.copy_(src)), 1e9)
    del src, dst
    return out


def stream(torch) -> dict:
    n, k = STREAM_SHAPE
    count = STREAM_GIB * 2**30 // (n * k * 2)
    weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(count)]
    out = {}
    for rows in DECODE_ROWS:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        out[str(rows)] = rate(count * n * k * 2, timed_ms(torch, lambda: [torch.nn.functional.linear(x, w)
                                                                           for w in weights]), 1e9)
    del weights
    return out


def gemm(torch) -> dict:
    out: dict[str, dict] = {"bf16": {}, "fp8": {}}
    for k, n in GEMM_KN:
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = torch.ones((), device="cuda", dtype=torch.float32)
        for m in GEMM_ROWS:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            key = f"{m}x{k}x{n}"
            out["bf16"][key] = rate(2.0 * m * k * n, timed_ms(torch, lambda: torch.mm(a, b)), 1e12)
            a8 = a.to(torch.float8_e4m3fn)
            try:
                out["fp8"][key] = rate(2.0 * m * k * n, timed_ms(
                    torch, lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)), 1e12)
            except Exception as exc:  # noqa: BLE001 - a torch without FP8 products on this part
                out["fp8"][key] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return out


def decode_attention(torch) -> dict:
    b, hq, hkv, d = ATTENTION["batch"], ATTENTION["query_heads"], ATTENTION["kv_heads"], ATTENTION["head_dim"]
    out = {}
    for ctx in ATTENTION["context"]:
        q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, ctx, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        try:
            out[str(ctx)] = rate(2 * k.numel() * 2, timed_ms(torch, lambda: torch.nn.functional.scaled_dot_product_attention(
                q, k, v, enable_gqa=True)), 1e9)
        except Exception as exc:  # noqa: BLE001
            out[str(ctx)] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        del q, k, v
    return out


def stream_fp8(torch) -> dict:
    n, k = STREAM_SHAPE
    count = STREAM_GIB * 2**30 // (n * k)
    weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn).t() for _ in range(count)]
    one = torch.ones((), device="cuda", dtype=torch.float32)
    out = {}
    for rows in DECODE_ROWS:
        x = torch.randn(max(rows, 16), k, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn)[:rows]
        try:
            out[str(rows)] = rate(count * n * k, timed_ms(torch, lambda: [
                torch._scaled_mm(x, w, scale_a=one, scale_b=one, out_dtype=torch.bfloat16) for w in weights]), 1e9)
        except Exception as exc:  # noqa: BLE001 - a row count this product refuses
            out[str(rows)] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    del weights
    return out


def grouped_shapes(torch) -> dict:
    out: dict[str, dict] = {}
    for e, h, n in EXPERT_SHAPES:
        w = torch.randn(e, n, h, device="cuda", dtype=torch.bfloat16)
        w8 = w.to(torch.float8_e4m3fn).transpose(1, 2)  # (e, h, n), column-major per expert
        wb = w.transpose(1, 2)
        scale_b = torch.ones(e, n, device="cuda", dtype=torch.float32)
        for fmt in ("bf16", "fp8"):
            entry = out.setdefault(f"{fmt} {e}x{h}x{n}", {})
            for t in EXPERT_TOKENS:
                x = torch.randn(e * t, h, device="cuda", dtype=torch.bfloat16)
                offs = torch.arange(t, e * t + 1, t, device="cuda", dtype=torch.int32)
                if fmt == "bf16":
                    fn = lambda: torch._grouped_mm(x, wb, offs=offs)  # noqa: E731
                    size = wb.numel() * 2
                else:
                    x8 = x.to(torch.float8_e4m3fn)
                    scale_a = torch.ones(e * t, device="cuda", dtype=torch.float32)
                    fn = lambda: torch._scaled_grouped_mm(x8, w8, scale_a, scale_b, offs=offs,  # noqa: E731
                                                          out_dtype=torch.bfloat16)
                    size = w8.numel()
                try:
                    entry[str(t)] = rate(size, timed_ms(torch, fn), 1e9)
                except Exception as exc:  # noqa: BLE001 - a torch without this product on this part
                    entry[str(t)] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        del w, w8, wb
        torch.cuda.empty_cache()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("error: no CUDA GPU is visible to torch; this probe measures one (run it on a machine with an NVIDIA GPU)")
    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    result = {
        "device": props.name, "capability": f"{props.major}.{props.minor}", "multiprocessors": props.multi_processor_count,
        "torch": torch.__version__, "cuda": torch.version.cuda, "driver": smi("driver_version"),
        "power_limit_w": smi("power.limit"), "max_sm_clock_mhz": smi("clocks.max.sm"),
        "date": time.strftime("%Y-%m-%d"), "memory": memory(torch),
    }
    for name, fn in (("copy_gb_s", copy), ("stream_gb_s", stream), ("gemm_tflops", gemm),
                     ("decode_attention_gb_s", decode_attention), ("stream_fp8_gb_s", stream_fp8),
                     ("grouped_shapes_gb_s", grouped_shapes)):
        began = time.perf_counter()
        try:
            result[name] = fn(torch)
        except Exception as exc:  # noqa: BLE001 - keep what the other parts measured
            result[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        torch.cuda.empty_cache()
        print(f"{name}: {time.perf_counter() - began:.1f} s", flush=True)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        write_text_atomic(Path(args.out), text + "\n")


if __name__ == "__main__":
    main()
