"""Accuracy of servekit's KV-pool predictions against measured vLLM start-up logs.

Usage: python bench/bench_kv_points.py [POINTS.jsonl ...] [--all]

Reads kv-points lines (default: ../shared/reference/kv-points-visible.jsonl beside the repo),
predicts each pool with ``servekit.fit.predict_point`` and prints the median |relative error| of
``kv_tokens`` over high- and medium-confidence points, overall and per architecture kind
(``--all`` adds low-confidence points). Target: median <= 5%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_POINTS = REPO.parent / "shared" / "reference" / "kv-points-visible.jsonl"
TARGET = 0.05


def architecture_kind(arch_type: str) -> str:
    """The coarse kind of an ``arch_type`` label: text before any parenthesis."""
    return arch_type.split("(")[0].strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO / "src"))
    from servekit.fit.points import predict_point

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="*", type=Path, default=[DEFAULT_POINTS])
    parser.add_argument("--all", action="store_true", help="include low-confidence points")
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per point")
    args = parser.parse_args(argv)
    confidences = {"high", "medium", "low"} if args.all else {"high", "medium"}
    errors: dict[str, list[float]] = defaultdict(list)
    skipped = 0
    for path in args.points:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            point = json.loads(line)
            if point.get("confidence") not in confidences:
                continue
            predicted = predict_point(point)["kv_tokens"]
            if predicted is None or not point.get("measured_kv_tokens"):
                skipped += 1
                continue
            error = predicted / point["measured_kv_tokens"] - 1
            errors[architecture_kind(point.get("arch_type", ""))].append(abs(error))
            if args.verbose:
                print(
                    f"{path.name}:{number:<4} {point['model'][:44]:<44} predicted {predicted:>11,} "
                    f"measured {point['measured_kv_tokens']:>11,} error {error:+.1%}"
                )
    every = [e for values in errors.values() for e in values]
    if not every:
        print("no points with a measured pool")
        return 1
    print(f"{'kind':<48} {'points':>6} {'median |error|':>15}")
    for kind, values in sorted(errors.items()):
        print(f"{kind:<48} {len(values):>6} {statistics.median(values):>15.2%}")
    median = statistics.median(every)
    print(f"{'all':<48} {len(every):>6} {median:>15.2%}   (target <= {TARGET:.0%}; {skipped} skipped)")
    return 0 if median <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
