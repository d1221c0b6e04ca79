"""Benchmark: time to ready of ``servekit up``, cold versus after ``servekit warm-cache``, for
vLLM on the CPU and MAX on the CPU, side by side in one run.

For each engine a tiny local Llama is written, then, with a fresh cache folder (so no compile
cache exists):

1. cold: ``servekit up MODEL --detach`` is timed until it returns (the server is ready), then
   ``servekit down``;
2. ``servekit warm-cache --command 'vllm serve MODEL ...' --engine E`` fills the engine's
   compile caches (timed too);
3. warm: the same ``up`` timed again, then ``down``.

Figures printed: seconds to ready (wall, as ``up`` measured it from spawn to the health answer,
and the whole command), the startup phases seen, and the warm-cache time, under a line saying
which machine ran it. Every cache a start reads (servekit's home, ``XDG_CACHE_HOME`` with vLLM's
and MAX's caches, torch inductor's) is a fresh folder per engine, so "cold" is cold. It needs the
engine environments (``servekit engine install``; ``SERVEKIT_ENGINES_DIR`` points at them).

Usage: .venv/bin/python bench/bench_launch.py [--engines vllm,max] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from testing.tiny_model import TinyLlamaShape, write_tiny_llama  # noqa: E402

SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)
SETUPS = {
    # engine id -> (model dtype, up options, the vLLM-form launch warm-cache reads)
    "vllm": ("bfloat16", ["--kv-cache-space", "1", "--max-model-len", "1024"], ["--max-model-len", "1024"]),
    "max": ("float32", ["--max-model-len", "512", "--arg=--dtype", "--arg=float32"],
            ["--max-model-len", "512", "--dtype", "float32"]),
}


def servekit(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.monotonic()
    program = str(Path(sys.executable).parent / "servekit")
    done = subprocess.run([program, *args], env=env, capture_output=True, text=True, check=False)
    return time.monotonic() - started, done


def up_and_down(model: Path, engine: str, options: list[str], env: dict[str, str]) -> dict:
    seconds, done = servekit(["up", str(model), "--engine", engine, *options, "--detach", "--format", "json"], env)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    run = json.loads(done.stdout.strip().splitlines()[-1])["run"]
    record = json.loads((Path(env["SERVEKIT_HOME"]) / "runs" / run / "run.json").read_text())
    servekit(["down", run], env)
    return {"command_s": round(seconds, 1), "ready_s": record["times"].get("ready_seconds"),
            "phases": record["phases"]}


def bench_engine(engine: str, root: Path) -> dict:
    dtype, up_options, launch = SETUPS[engine]
    model = write_tiny_llama(root / f"{engine}-tiny", shape=SHAPE, dtype=dtype)
    env = {**os.environ, "SERVEKIT_HOME": str(root / f"{engine}-home"), "XDG_CACHE_HOME": str(root / f"{engine}-cache"),
           "TORCHINDUCTOR_CACHE_DIR": str(root / f"{engine}-inductor"), "VLLM_CPU_KVCACHE_SPACE": "1"}
    cold = up_and_down(model, engine, up_options, env)
    command = shlex.join(["vllm", "serve", str(model), *launch])
    warm_s, warmed = servekit(["warm-cache", "--command", command, "--engine", engine], env)
    warm = up_and_down(model, engine, up_options, env)
    return {"engine": engine, "cold": cold, "warm_cache_s": round(warm_s, 1),
            "warm_cache_ok": warmed.returncode == 0, "warm": warm}


def machine_line() -> str:
    from servekit.launch.machine import detect

    machine = detect()
    gpus = ", ".join(g.name for g in machine.gpus) or "no GPU"
    return (f"machine: {machine.cpu_model}, {machine.cores} cores / {machine.logical_cpus} logical CPUs, "
            f"{machine.memory_gib:.1f} GiB memory, {gpus}, {machine.system}; load average at start "
            f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def print_table(results: list[dict]) -> None:
    print(f"{'engine':8} {'cold ready s':>13} {'warm-cache s':>13} {'warm ready s':>13}")
    for r in results:
        print(f"{r['engine']:8} {str(r['cold'].get('ready_s', 'error')):>13} {r['warm_cache_s']:>13} "
              f"{str(r['warm'].get('ready_s', 'error')):>13}")
    print(json.dumps(results, indent=2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(SETUPS))
    parser.add_argument("--keep", help="Work in this folder and keep it (default: a temp folder).")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-launch-") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        print_table([bench_engine(engine, root) for engine in args.engines.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
