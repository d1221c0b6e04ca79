"""Benchmark: servekit's API build against the reference site's builder, full and after one edit.

For each catalog (the reference catalog when ``../shared/reference/catalog`` is present, and the
bundled one), copied to a temporary directory so it can be edited, ``--runs`` rounds, each
paired in the same run, all as processes:

1. the reference site's own builder (``node scripts/build-recipes-api.mjs`` of
   github:vllm-project/recipes, ``bench/reference_site.py``) building the same catalog copy
   (it has only full builds);
2. ``servekit api build --full`` into the tree of the previous build (every recipe rendered,
   every file checked, the new version swapped in);
3. after editing one recipe's title, ``servekit api build`` (incremental: re-renders that
   recipe, rewrites the index files).

Wall and CPU (user + system of the children) medians are printed, with two ratios against
the reference builder's full build: servekit's full build (target: at most 1.0x) and the
rebuild after one edit (target: at most 0.1x). Each ratio is the median of the per-round
ratios (the three builds of a round ran beside each other, so a slow moment of a shared
machine weighs on all three). ``--in-process`` also times ``build_api`` in this process (no
interpreter start). The edited recipe defaults to the largest one (``--recipe`` picks
another).

Usage: .venv/bin/python bench/bench_incremental.py [--runs N] [--jobs N] [--out-root DIR]
       [--catalog DIR ...] [--recipe ID] [--reference-repo GIT_DIR] [--in-process]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import REFERENCE_CATALOG, _cpu, filesystem_of, machine_line, servekit_cmd  # noqa: E402
from reference_site import ReferenceSite, ReferenceUnavailable, prepare  # noqa: E402

TARGET_RATIO = 0.1
FULL_TARGET = 1.0
FROZEN_ENV = "SERVEKIT_BENCH_FROZEN"


def run_frozen() -> int:
    """Copy the servekit package into a temporary folder, compile its bytecode (as ``pip
    install`` does for an installed package; an editable checkout under
    ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module in every process) and
    run this script again on it."""
    import compileall

    import servekit

    work = Path(tempfile.mkdtemp(prefix="servekit-bench-code-"))
    try:
        shutil.copytree(Path(servekit.__file__).resolve().parent, work / "servekit",
                        ignore=shutil.ignore_patterns("__pycache__"))
        compileall.compile_dir(work / "servekit", quiet=1)
        env = {**os.environ, FROZEN_ENV: "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(work), os.environ.get("PYTHONPATH")]))}
        return subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env).returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


def timed(action: Callable[[], object]) -> tuple[float, float, object]:
    cpu0, wall0 = _cpu(), time.perf_counter()
    result = action()
    return time.perf_counter() - wall0, _cpu() - cpu0, result


def largest_recipe(catalog: Path) -> str:
    files = sorted((catalog / "models").rglob("*.yaml"), key=lambda p: (-p.stat().st_size, str(p)))
    return files[0].relative_to(catalog / "models").with_suffix("").as_posix()


def edit_title(catalog: Path, recipe_id: str, number: int) -> None:
    """Change the recipe's quoted title (so its rendered files change), else add a comment."""
    path = catalog / "models" / f"{recipe_id}.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith("  title: "):
            value = line[len("  title: "):].rstrip("\n")
            quoted = value.startswith('"') and value.endswith('"')
            inner = value[1:-1] if quoted else value
            inner = inner.split("] ", 1)[1] if inner.startswith("[edit ") else inner
            lines[index] = f'  title: "[edit {number}] {inner}"\n' if quoted else line
            if quoted:
                path.write_text("".join(lines), encoding="utf-8")
                return
            break
    path.write_text("".join(lines) + f"# bench edit {number}\n", encoding="utf-8")


def edited_rebuild(edit: Callable[[int], None], number: int, rebuild: Callable[[], object],
                   incremental: Callable[[object], bool], tries: int = 3) -> tuple[float, float, object]:
    """Edit the recipe and time the rebuild. When servekit's own files changed since the last
    build (an editable install being worked on), the rebuild is a full one by design; that run
    is reported and the edit and rebuild are tried again."""
    for attempt in range(tries):
        edit(number * 10 + attempt)
        wall, cpu, result = timed(rebuild)
        if incremental(result):
            return wall, cpu, result
        print(f"  note: rebuild {number} was a full build ({wall:.2f} s): servekit's files changed; retrying")
    raise SystemExit(f"no incremental rebuild in {tries} tries")


def run_quiet(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def line(label: str, walls: list[float], cpus: list[float]) -> tuple[float, float]:
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"  {label:<36} wall {wall:7.3f} s   cpu {cpu:7.3f} s")
    return wall, cpu


def ratio(label: str, base_wall: float, base_cpu: float, wall: float, cpu: float, *, limit: float,
          target: bool) -> None:
    """``wall / base_wall`` and ``cpu / base_cpu``; measured against ``limit`` only on the
    reference catalog (the targets are about the reference site's build of it)."""
    wall, cpu = wall / base_wall, cpu / base_cpu
    verdict = ("meets" if wall <= limit else "misses") + f" the {limit}x target"
    print(f"  {label:<36} wall {wall:7.3f}x   cpu {cpu:7.3f}x   ({verdict if target else 'no target for this catalog'})")


def bench_in_process(catalog: Path, out: Path, recipe: str, runs: int, jobs: int | None, target: bool) -> None:
    from servekit.api.publish import build_api

    full_w, full_c, inc_w, inc_c = [], [], [], []
    for number in range(runs):
        wall, cpu, _ = timed(lambda: build_api(out, catalog, jobs=jobs, full=True))
        full_w.append(wall)
        full_c.append(cpu)
        wall, cpu, summary = edited_rebuild(
            lambda n: edit_title(catalog, recipe, n), number,
            lambda: build_api(out, catalog, jobs=jobs), lambda s: s.rerendered is not None,
        )
        inc_w.append(wall)
        inc_c.append(cpu)
    print(f"  in this process (last rebuild: {summary.line()})")
    full = line("full build (--full)", full_w, full_c)
    incremental = line("incremental, one recipe edited", inc_w, inc_c)
    ratio("incremental / full", *full, *incremental, limit=TARGET_RATIO, target=target)


def bench_processes(catalog: Path, out: Path, recipe: str, runs: int, jobs: int | None, target: bool,
                    reference: ReferenceSite | None) -> None:
    argv = [*servekit_cmd(), "api", "build", "--out", str(out), "--catalog", str(catalog)]
    if jobs:
        argv += ["--jobs", str(jobs)]
    ref: list[tuple[float, float]] = []
    full: list[tuple[float, float]] = []
    inc: list[tuple[float, float]] = []
    for number in range(runs):
        if reference is not None:
            ref.append(timed(reference.build)[:2])
        full.append(timed(lambda: run_quiet([*argv, "--full"]))[:2])
        inc.append(edited_rebuild(
            lambda n: edit_title(catalog, recipe, n), 100 + number,
            lambda: run_quiet(argv), lambda output: "incremental: re-rendered" in str(output),
        )[:2])
    print(f"  as processes, {runs} rounds" + (" (each: reference builder, servekit --full, servekit after one edit)"
                                              if reference is not None else ""))
    for number in range(runs):
        cells = [*([ref[number]] if reference is not None else []), full[number], inc[number]]
        print(f"    round {number + 1}: " + " | ".join(f"wall {w:7.3f} s cpu {c:6.3f} s" for w, c in cells))
    if reference is not None:
        line("reference builder (node, full)", *zip(*ref))
    line("servekit full build (--full)", *zip(*full))
    line("servekit rebuild, one recipe edited", *zip(*inc))
    if reference is None:
        ratio("incremental / full", *(statistics.median(x) for x in zip(*full)),
              *(statistics.median(x) for x in zip(*inc)), limit=TARGET_RATIO, target=target)
        return
    paired("servekit full / reference", full, ref, FULL_TARGET, target)
    paired("servekit rebuild / reference", inc, ref, TARGET_RATIO, target)


def paired(label: str, ours: list[tuple[float, float]], theirs: list[tuple[float, float]],
           limit: float, target: bool) -> None:
    """Median of the per-round ratios, wall and CPU."""
    wall = statistics.median(a[0] / b[0] for a, b in zip(ours, theirs))
    cpu = statistics.median(a[1] / b[1] for a, b in zip(ours, theirs))
    ratio(label, 1.0, 1.0, wall, cpu, limit=limit, target=target)


def reference_for(catalog: Path, args: argparse.Namespace, work: Path) -> ReferenceSite | None:
    try:
        return prepare(catalog, args.reference_repo, work)
    except ReferenceUnavailable as exc:
        print(f"  note: the reference builder is not run: {exc}")
        return None


def bench_catalog(source: Path, args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="servekit-bench-inc-", dir=args.out_root))
    try:
        catalog = work / "catalog"
        shutil.copytree(source, catalog)
        recipe = args.recipe or largest_recipe(catalog)
        out = work / "site"
        import servekit

        print(f"catalog {source}: editing {recipe}")
        print(f"  output on {filesystem_of(work)}; {os.cpu_count()} CPUs; median of {args.runs} rounds;"
              f" servekit from {Path(servekit.__file__).parent}")
        reference = reference_for(catalog, args, work)
        argv = [*servekit_cmd(), "api", "build", "--out", str(out), "--catalog", str(catalog)]
        if args.jobs:
            argv += ["--jobs", str(args.jobs)]
        wall, cpu, output = timed(lambda: run_quiet(argv))
        print(f"  first build into an empty folder: servekit wall {wall:.3f} s cpu {cpu:.3f} s ({str(output).strip()})")
        if reference is not None:
            try:
                wall, cpu, _ = timed(reference.build)
            except SystemExit as exc:
                print(f"  note: the reference builder fails on this catalog, not compared: {exc}")
                reference = None
            else:
                print(f"  first build into an empty folder: reference builder (commit {reference.commit[:12]})"
                      f" wall {wall:.3f} s cpu {cpu:.3f} s ({reference.files()} files)")
        target = source.resolve() == REFERENCE_CATALOG.resolve()
        if args.in_process:
            bench_in_process(catalog, out, recipe, args.runs, args.jobs, target)
        bench_processes(catalog, out, recipe, args.runs, args.jobs, target, reference)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="build workers (default: CPUs)")
    parser.add_argument("--out-root", type=Path, default=None, help="where the trees are written")
    parser.add_argument("--catalog", type=Path, action="append", default=None,
                        help="catalog to measure (repeatable; default: the reference one when present, and the bundled one)")
    parser.add_argument("--recipe", default=None, help="recipe id to edit (default: the largest)")
    parser.add_argument("--reference-repo", type=Path, default=None,
                        help="git copy of github:vllm-project/recipes (default: $SERVEKIT_REFERENCE_RECIPES or the fetched one)")
    parser.add_argument("--in-process", action="store_true", help="also time build_api in this process")
    args = parser.parse_args()
    if not os.environ.get(FROZEN_ENV):
        return run_frozen()
    from servekit.catalog.documents import bundled_catalog_dir

    catalogs = args.catalog or [c for c in (REFERENCE_CATALOG, bundled_catalog_dir()) if (c / "taxonomy.yaml").is_file()]
    print(machine_line())
    for source in catalogs:
        bench_catalog(source, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
