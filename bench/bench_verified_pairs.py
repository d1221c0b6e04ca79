"""Every verified (recipe, hardware) pair of a catalog, planned as text and as its docker form:
how many plan with exit 0, and the refused ones counted by the code of what refused them.

A recipe marks a pair verified with ``meta.hardware: {h200: verified}``; pairs whose hardware the
taxonomy lacks are left out (and counted). The plans go through ``servekit plan``'s own path in
this process, the catalog read once (``tests/testing/verified_pairs.py``, which the test
``tests/app/test_verified_pairs.py`` uses too). ``--list`` prints each refused plan.

Usage: .venv/bin/python bench/bench_verified_pairs.py [--catalog DIR] [--list]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from servekit.catalog.documents import read_documents  # noqa: E402
from testing.verified_pairs import outcomes, refusal_counts, verified_pairs  # noqa: E402

DEFAULT_CATALOG = ROOT.parent / "shared" / "reference" / "catalog"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG)
    parser.add_argument("--list", action="store_true", help="print each refused plan and its reasons")
    args = parser.parse_args()
    if not args.catalog.is_dir():
        print(f"no catalog at {args.catalog}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    docs = read_documents(args.catalog)
    pairs = verified_pairs(docs)
    marked = sum(1 for r in docs.recipes.values() if isinstance(r, dict)
                 for mark in ((r.get("meta") or {}).get("hardware") or {}).values() if mark == "verified")
    results = list(outcomes(docs))
    seconds = time.perf_counter() - started
    refused = [r for r in results if r.exit_code]
    print(f"catalog: {args.catalog}")
    print(f"verified pairs: {marked}, with taxonomy hardware: {len(pairs)}; plans (text + docker): {len(results)}")
    by_form = Counter(r.form for r in refused)
    print(f"exit 0: {len(results) - len(refused)}; refused: {len(refused)} "
          f"(text {by_form['text']}, docker {by_form['docker']}); {seconds:.1f} s")
    print("refused plans by reason code (a plan refused for two reasons counts under each):")
    for code, count in refusal_counts(results).most_common():
        print(f"  {count:5d}  {code}")
    if args.list:
        for r in refused:
            print(f"{r.recipe} {r.hardware} {r.form}: {', '.join(r.reasons)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
