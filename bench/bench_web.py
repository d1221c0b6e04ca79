"""Benchmark: the web server under load, and rebuilding the API tree after one recipe edit.

1. ``servekit web`` as its own process on a free loopback port; 50 concurrent clients send
   ``POST /api/plan`` (one selection), then ``GET /`` (the builder page for one selection);
   p50 and p95 latency of each. Bounded: ``--requests`` per phase and ``--seconds`` per
   phase, whichever comes first; the server is stopped at the end.
2. ``api build`` of a catalog (default: the reference catalog when present, else the bundled
   one): a full build into a new directory, a full rebuild in place, then a rebuild into the
   same directory after one recipe's description changed (a copy of the catalog is edited,
   never the original), with the ratio rebuild / full rebuild (``bench/bench_incremental.py``
   measures the same pair as medians of several runs).
3. The reference site's own builder, side by side, only when a checkout of it is given
   (``--reference-builder "COMMAND"``, run in the shell with ``{catalog}`` and ``{out}``
   filled in); otherwise skipped, and the report says so.

Usage: .venv/bin/python bench/bench_web.py [--clients 50] [--requests 500] [--seconds 60]
       [--catalog DIR] [--reference-builder CMD] [--skip-build]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from servekit.processes import free_port, stop_group, wait_http_ok

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_CATALOG = ROOT.parent / "shared" / "reference" / "catalog"
BUNDLED = ROOT / "src" / "servekit" / "catalog_data"
MODEL = "Qwen/Qwen3.8-27B"
PLAN_BODY = {"recipe": MODEL, "hardware": "rtx_5090", "variant": "nvfp4", "strategy": "single_node_tp"}
PAGE = f"/?model={MODEL}&hardware=rtx_5090&feature=spec_decoding"


def start_server(port: int, catalog: str | None) -> subprocess.Popen:
    args = [sys.executable, "-c", "from servekit.cli import run; run()", "web", "--port", str(port)]
    if catalog:
        args += ["--catalog", catalog]
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    problem = wait_http_ok(f"http://127.0.0.1:{port}/openapi.json", server.poll, timeout=60, interval=0.2)
    if problem is not None:
        stop_group(server.pid, grace=5.0)
        raise SystemExit(f"servekit web: {problem}: {server.stderr.read().decode()[-2000:]}")
    return server


async def _client(http, method: str, url: str, body, stop_at: float, budget: list[int], out: list[float]) -> None:
    while budget[0] > 0 and time.monotonic() < stop_at:
        budget[0] -= 1
        start = time.perf_counter()
        response = await http.request(method, url, json=body)
        out.append(time.perf_counter() - start)
        if response.status_code != 200:
            raise SystemExit(f"{method} {url}: {response.status_code} {response.text[:300]}")


async def load(base: str, method: str, path: str, body, clients: int, requests: int, seconds: float) -> list[float]:
    import httpx

    latencies: list[float] = []
    budget = [requests]
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=120) as http:
        await http.request(method, path, json=body)  # warm the caches once
        stop_at = time.monotonic() + seconds
        await asyncio.gather(*(_client(http, method, path, body, stop_at, budget, latencies) for _ in range(clients)))
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def report_latency(name: str, latencies: list[float], wall: float) -> dict:
    row = {"requests": len(latencies), "p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
           "p95_ms": round(percentile(latencies, 0.95) * 1000, 1), "per_s": round(len(latencies) / wall, 1)}
    print(f"{name:<28} {row['requests']:>6} requests  p50 {row['p50_ms']:>8.1f} ms  p95 {row['p95_ms']:>8.1f} ms"
          f"  {row['per_s']:>7.1f}/s")
    return row


def bench_server(args) -> dict:
    port = free_port()
    server = start_server(port, args.catalog)
    base = f"http://127.0.0.1:{port}"
    out = {}
    try:
        for name, method, path, body in (("POST /api/plan", "POST", "/api/plan", PLAN_BODY),
                                         ("GET / (builder page)", "GET", PAGE, None)):
            start = time.perf_counter()
            latencies = asyncio.run(load(base, method, path, body, args.clients, args.requests, args.seconds))
            out[name] = report_latency(name, latencies, time.perf_counter() - start)
    finally:
        stop_group(server.pid, grace=10.0)
    return out


def _edit_one_recipe(catalog: Path) -> Path:
    recipe = sorted((catalog / "models").rglob("*.yaml"))[0]
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(text.replace("description: ", "description: edited for the benchmark; ", 1), encoding="utf-8")
    return recipe


def bench_build(args) -> dict:
    from servekit.api.publish import build_api

    source = Path(args.catalog) if args.catalog else (REFERENCE_CATALOG if REFERENCE_CATALOG.is_dir() else BUNDLED)
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        catalog = Path(tmp) / "catalog"
        shutil.copytree(source, catalog)
        out = Path(tmp) / "tree"
        start = time.perf_counter()
        full = build_api(out, catalog)
        full_s = time.perf_counter() - start
        start = time.perf_counter()
        build_api(out, catalog, full=True)
        again_s = time.perf_counter() - start
        edited = _edit_one_recipe(catalog)
        start = time.perf_counter()
        rebuilt = build_api(out, catalog)
        rebuild_s = time.perf_counter() - start
        kind = ("incremental" if rebuilt.rerendered is not None
                else "a full build: servekit's own files changed meanwhile")
        print(f"catalog {source} ({full.recipes} recipes, {full.files} files)")
        print(f"{'full build, new directory':<28} {full_s:8.2f} s")
        print(f"{'full rebuild in place':<28} {again_s:8.2f} s")
        print(f"{'rebuild after one edit':<28} {rebuild_s:8.2f} s  ({edited.name}, {kind}; "
              f"{rebuild_s / again_s:.3f}x the full rebuild, goal 0.1x)")
        result = {"full_s": round(full_s, 3), "full_again_s": round(again_s, 3),
                  "rebuild_one_s": round(rebuild_s, 3), "recipes": full.recipes}
        result["reference_builder_s"] = reference_builder(args.reference_builder, catalog, Path(tmp) / "ref")
    return result


def reference_builder(command: str | None, catalog: Path, out: Path) -> float | None:
    if not command:
        print("reference builder: skipped (no checkout given; pass --reference-builder \"CMD {catalog} {out}\")")
        return None
    start = time.perf_counter()
    subprocess.run(command.format(catalog=catalog, out=out), shell=True, check=True)  # noqa: S602 - the user's own command
    seconds = time.perf_counter() - start
    print(f"{'reference builder (full)':<28} {seconds:8.2f} s")
    return round(seconds, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=500, help="requests per phase (at most)")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds per phase (at most)")
    parser.add_argument("--catalog", default=None)
    parser.add_argument("--reference-builder", default=os.environ.get("SERVEKIT_REFERENCE_BUILDER"))
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_build import machine_line

    print(machine_line())
    print(f"{args.clients} concurrent clients on loopback; servekit web in its own process")
    results = {"server": bench_server(args)}
    if not args.skip_build:
        results["build"] = bench_build(args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
