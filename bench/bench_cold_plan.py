"""Benchmark: the CPU a cold ``servekit plan MODEL --format json`` costs beyond Python's own start.

Runs, in one go and interleaved, ``python -c pass`` and ``servekit plan Qwen/Qwen3.8-27B --format
json`` (the bundled catalog, nothing fetched) as child processes of the same interpreter, ``--runs``
times each, and prints each one's median CPU time (user + system of the child, from its rusage),
their difference and their ratio, against the target: at most 100 ms more than ``python -c pass``.

Python modules are timed as a pip install leaves them, their bytecode cached, and the catalog as
any plan after the first finds it, its documents parsed once (one untimed warm-up run writes both
caches, even where PYTHONDONTWRITEBYTECODE is set). ``--no-bytecode-cache`` times the modules
compiled from source on every run instead (each run gets an empty PYTHONPYCACHEPREFIX), as an
editable install behaves under PYTHONDONTWRITEBYTECODE=1; ``--no-parsed-catalog`` gives each run an
empty servekit home, so the catalog's YAML is parsed every time (the first plan after an edit).
``--imports`` lists the modules the plan imports that ``python -c pass`` does not (``python -X
importtime`` shows what each costs). ``--against PYTHON`` (repeatable) times the same plan under
another checkout's interpreter too (its virtual environment's python, e.g. one made for main
before a change), in the same runs, interleaved; its bytecode is cached under a temporary
PYTHONPYCACHEPREFIX, so nothing is written into that checkout.

Usage: .venv/bin/python bench/bench_cold_plan.py [--runs N] [--model ID] [--no-bytecode-cache]
       [--no-parsed-catalog] [--imports] [--against PYTHON ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_EXTRA_S = 0.100
MODEL = "Qwen/Qwen3.8-27B"
IMPORTED = "import sys; b = set(sys.modules); from servekit.cli import run; sys.argv = {argv!r}\n" \
           "try:\n    run()\nexcept SystemExit:\n    pass\n" \
           "sys.stderr.write('\\n'.join(sorted(set(sys.modules) - b)) + '\\n')"


def plan_argv(model: str, python: str = sys.executable) -> list[str]:
    return [python, "-c", "import sys; from servekit.cli import run; sys.exit(run())",
            "plan", model, "--format", "json"]


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one child process run to its end (its output discarded)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {stderr.strip()[-500:]}")
    return usage.ru_utime + usage.ru_stime


def measure(runs: int, model: str, bytecode_cache: bool, parsed_catalog: bool,
            against: list[str]) -> tuple[list[float], list[float], list[list[float]]]:
    """CPU seconds of ``python -c pass``, of the plan and of the plan under each ``against``
    interpreter, ``runs`` each, interleaved."""
    env = dict(os.environ)
    warm = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as other_caches:
        other_env = [dict(env, PYTHONPYCACHEPREFIX=os.path.join(other_caches, str(i))) for i in range(len(against))]
        # untimed: writes the bytecode and parsed-catalog caches; without the parsed catalog, once more
        # with an empty home, so the modules that parse the YAML have their bytecode written as well
        homes = [{}] if parsed_catalog else [{}, {"SERVEKIT_HOME": os.path.join(other_caches, "warm-home")}]
        for home in homes:
            child_cpu(plan_argv(model), dict(warm, **home))
            for i, (python, cached) in enumerate(zip(against, other_env)):
                warm_other = {k: v for k, v in cached.items() if k != "PYTHONDONTWRITEBYTECODE"}
                child_cpu(plan_argv(model, python), dict(warm_other, **{k: v + f"-{i}" for k, v in home.items()}))
        bare, plan, others = [], [], [[] for _ in against]
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as scratch:  # each source its own empty caches, when asked
                run_env = dict(env)
                run_env.update({} if bytecode_cache else {"PYTHONPYCACHEPREFIX": os.path.join(scratch, "pyc")})
                run_env.update({} if parsed_catalog else {"SERVEKIT_HOME": os.path.join(scratch, "home")})
                bare.append(child_cpu([sys.executable, "-c", "pass"], run_env))
                plan.append(child_cpu(plan_argv(model), run_env))
                for i, (python, cached, times) in enumerate(zip(against, other_env, others)):
                    other = dict(cached)
                    other.update({} if bytecode_cache else {"PYTHONPYCACHEPREFIX": os.path.join(scratch, f"pyc-{i}")})
                    other.update({} if parsed_catalog else {"SERVEKIT_HOME": os.path.join(scratch, f"home-{i}")})
                    times.append(child_cpu(plan_argv(model, python), other))
    return bare, plan, others


def imported_modules(model: str) -> list[str]:
    code = IMPORTED.format(argv=["servekit", "plan", model, "--format", "json"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [line for line in done.stderr.splitlines() if line and not line.startswith("_")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--no-bytecode-cache", action="store_true", help="compile every module on every run")
    parser.add_argument("--no-parsed-catalog", action="store_true", help="parse the catalog's YAML on every run")
    parser.add_argument("--imports", action="store_true", help="list the modules the plan imports")
    parser.add_argument("--against", action="append", default=[], metavar="PYTHON",
                        help="also time the plan under this interpreter (another checkout's venv), interleaved")
    args = parser.parse_args()
    bare, plan, others = measure(args.runs, args.model, not args.no_bytecode_cache, not args.no_parsed_catalog,
                                 args.against)
    b, p = statistics.median(bare), statistics.median(plan)
    mode = ("compiled from source each run" if args.no_bytecode_cache else "bytecode cached") + \
        (", catalog YAML parsed each run" if args.no_parsed_catalog else ", catalog documents parsed before")
    print(f"# .venv/bin/python bench/bench_cold_plan.py {' '.join(sys.argv[1:])}   "
          f"({time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())})")
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"Python {platform.python_version()}")
    print(f"{args.runs} runs each, median user+sys CPU of the child ({mode}):")
    print(f"  python -c pass                         {b * 1000:7.1f} ms   (least {min(bare) * 1000:.1f} ms)")
    print(f"  servekit plan {args.model} --format json {p * 1000:7.1f} ms   (least {min(plan) * 1000:.1f} ms)")
    print(f"  difference {(p - b) * 1000:.1f} ms (target at most {TARGET_EXTRA_S * 1000:.0f} ms), "
          f"ratio {p / b if b else float('inf'):.1f}x")
    for python, times in zip(args.against, others):
        o = statistics.median(times)
        print(f"  against {python}: {o * 1000:.1f} ms (least {min(times) * 1000:.1f} ms), "
              f"difference {(o - b) * 1000:.1f} ms, ratio {o / b if b else float('inf'):.1f}x; "
              f"this checkout saves {(o - p) * 1000:.1f} ms")
    if args.imports:
        mods = imported_modules(args.model)
        tops = sorted({m.split(".")[0] for m in mods})
        print(f"modules imported beyond python -c pass: {len(mods)} ({sum(m.startswith('servekit') for m in mods)} "
              f"servekit); packages: {', '.join(tops)}")
    ok = p - b <= TARGET_EXTRA_S
    print("within target" if ok else "NOT within target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
