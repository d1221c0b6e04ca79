"""Benchmark: ``servekit plan --batch`` over a large catalog with many broken lines.

Builds a catalog of ``--recipes`` recipes (default 2,000) from the reference catalog's recipes (the
bundled ones when ../shared/reference is absent), each copy under a new id (``bench-N/ORG--NAME``),
beside the source's taxonomy, platforms, strategies and kv_store, every ``--misshapen-every``-th
copy misshapen (``model: 5``, a document planning trips over and the validator explains); then
``--lines`` batch lines (default 2,000) over it, a share of them broken on purpose: unknown
recipes, unknown variants, unknown hardware, unknown features, conflicting features, misshapen
recipes, lines that are not JSON objects.
Runs ``servekit plan --batch`` once as a child process and prints its wall time, its CPU time
(user + system) and its peak resident memory (the child's ``ru_maxrss``), how many lines came
back and how many were errors, against the targets (2 minutes, 1 GiB).

Usage: .venv/bin/python bench/bench_batch.py [--recipes N] [--lines N] [--misshapen-every N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_CATALOG = ROOT.parent / "shared" / "reference" / "catalog"
BUNDLED_CATALOG = ROOT / "src" / "servekit" / "catalog_data"
WALL_TARGET_S = 120.0
RSS_TARGET_BYTES = 1 << 30
SHARED_FILES = ("taxonomy.yaml", "platforms.yaml")
SHARED_DIRS = ("strategies", "kv_store")
# the kinds of line written, in turn; each broken kind names what is wrong with it
LINE_KINDS = ("plain", "unknown_recipe", "plain", "bad_variant", "bad_hardware", "plain", "unknown_feature",
              "conflicting_features", "plain", "misshapen_recipe", "plain", "not_an_object")
MISSHAPEN = ("\nmodel:\n", "\nmodel: 5\nwas_model:\n")  # the recipe's model block becomes a number


def source_catalog() -> Path:
    return REFERENCE_CATALOG if (REFERENCE_CATALOG / "taxonomy.yaml").is_file() else BUNDLED_CATALOG


def make_catalog(source: Path, out: Path, count: int, misshapen_every: int) -> tuple[list[str], list[str]]:
    """``count`` recipes copied from ``source`` under new ids into ``out``, every ``misshapen_every``-th
    one misshapen; returns the ids of the sound ones and of the misshapen ones."""
    out.mkdir(parents=True, exist_ok=True)
    for name in SHARED_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, out / name)
    for name in SHARED_DIRS:
        if (source / name).is_dir():
            shutil.copytree(source / name, out / name, dirs_exist_ok=True)
    models = source / "models"
    originals = sorted(p for p in models.rglob("*.yaml") if p.is_file())
    ids: list[str] = []
    misshapen: list[str] = []
    for i in range(count):
        original = originals[i % len(originals)]
        org, name = original.relative_to(models).with_suffix("").parts[-2:]
        new_id = f"bench-{i // len(originals)}/{org}--{name}"
        target = out / "models" / f"{new_id}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        text = original.read_text(encoding="utf-8")
        broken = misshapen_every > 0 and i % misshapen_every == misshapen_every - 1 and MISSHAPEN[0] in text
        target.write_text(text.replace(*MISSHAPEN) if broken else text, encoding="utf-8")
        (misshapen if broken else ids).append(new_id)
    return ids, misshapen


def _recipe_facts(path: Path) -> dict[str, Any]:
    """The few facts of a recipe a line needs (hardware it lists, its features), read without servekit."""
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}
    meta = doc.get("meta") or {}
    features = doc.get("features") or {}
    exclusive = [(name, other) for name, spec in features.items() if isinstance(spec, dict)
                 for other in spec.get("exclusive_with") or [] if other in features]
    strategies = [str(s) for s in doc.get("compatible_strategies") or []]
    single = [s for s in strategies if s.startswith("single_node")]
    return {"hardware": sorted((meta.get("hardware") or {}).keys()), "features": sorted(features),
            "exclusive": exclusive, "strategy": (single or strategies or ["single_node_tp"])[0]}


def make_lines(catalog: Path, ids: list[str], misshapen: list[str], count: int, seed: int = 7) -> list[str]:
    """``count`` batch lines over ``ids`` (and ``misshapen``), every LINE_KINDS kind in turn."""
    rng = random.Random(seed)
    facts: dict[str, dict[str, Any]] = {}
    lines = []
    for i in range(count):
        kind = LINE_KINDS[i % len(LINE_KINDS)]
        rid = rng.choice(ids)
        if rid not in facts:
            facts[rid] = _recipe_facts(catalog / "models" / f"{rid}.yaml")
        fact = facts[rid]
        line: Any = {"recipe": rid, "strategy": fact["strategy"]}
        if fact["hardware"]:
            line["hardware"] = rng.choice(fact["hardware"])
        if kind == "unknown_recipe":
            line["recipe"] = f"nobody-{i}/no-such-model"
        elif kind == "bad_variant":
            line["variant"] = "no_such_variant"
        elif kind == "bad_hardware":
            line["hardware"] = "no_such_device"
        elif kind == "unknown_feature":
            line["features"] = ["no_such_feature"]
        elif kind == "conflicting_features":
            pair = fact["exclusive"][0] if fact["exclusive"] else (fact["features"] or ["a"])[:1] * 2
            line["features"] = list(pair)
            line["modes"] = {pair[0]: "no_such_mode"}
        elif kind == "misshapen_recipe" and misshapen:
            line["recipe"] = rng.choice(misshapen)
        elif kind == "not_an_object":
            line = [rid]
        lines.append(json.dumps(line))
    return lines


def run_batch(catalog: Path, batch: Path) -> dict[str, Any]:
    """One ``servekit plan --batch`` child: wall and CPU seconds, peak RSS bytes, lines out, errors."""
    script = Path(sys.executable).parent / "servekit"
    argv = [str(script)] if script.is_file() else [sys.executable, "-m", "servekit"]
    argv += ["plan", "--batch", str(batch), "--catalog", str(catalog)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {
        "rc": done.returncode,
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_rss_bytes": after.ru_maxrss * 1024,  # kilobytes on Linux; this is the only child so far
        "lines": len(out),
        "errors": sum(1 for obj in out if "error" in obj),
        "stderr": done.stderr.strip()[-500:],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--misshapen-every", type=int, default=40, help="every N-th recipe misshapen (0: none)")
    parser.add_argument("--keep", help="build the catalog and batch file here and keep them")
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="servekit-bench-batch-"))
    try:
        source = source_catalog()
        catalog = work / "catalog"
        ids, misshapen = make_catalog(source, catalog, args.recipes, args.misshapen_every)
        batch = work / "batch.jsonl"
        batch.write_text("\n".join(make_lines(catalog, ids, misshapen, args.lines)) + "\n", encoding="utf-8")
        result = run_batch(catalog, batch)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"# .venv/bin/python bench/bench_batch.py --recipes {args.recipes} --lines {args.lines} "
          f"--misshapen-every {args.misshapen_every}   ({time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())})")
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{platform.system()} {platform.release()}; Python {platform.python_version()}")
    print(f"catalog: {args.recipes} recipes from {source}, {len(misshapen)} misshapen")
    print(f"batch: {args.lines} lines, {result['lines']} answered, {result['errors']} errors, exit {result['rc']}")
    print(f"wall {result['wall_s']:.1f} s (target {WALL_TARGET_S:.0f} s)   cpu {result['cpu_s']:.1f} s   "
          f"peak RSS {result['peak_rss_bytes'] / (1 << 20):.0f} MiB (target {RSS_TARGET_BYTES >> 20} MiB)")
    ok = result["lines"] == args.lines and result["wall_s"] < WALL_TARGET_S and result["peak_rss_bytes"] < RSS_TARGET_BYTES
    print("within targets" if ok else "NOT within targets" + (f"; stderr: {result['stderr']}" if result["stderr"] else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
