"""Split a catalog's recipes into balanced parts for a parallel build, and find overlaps.

Parts are chosen from the recipe files alone (before any recipe is parsed, so every part
parses its own recipes): greedy by file size, each part in catalog order. Two recipes depend
on each other only when both promote a variant to the same repository id (the later one's
files replace the earlier one's); when such recipes land in different parts, the build
re-renders them in order afterwards (``overlapping_promotions``).
"""

from __future__ import annotations

from pathlib import Path


def partition_recipes(paths: dict[str, Path], jobs: int) -> list[list[str]]:
    """At most ``jobs`` non-empty parts of recipe ids, balanced by file size, in catalog order."""
    order = {rid: i for i, rid in enumerate(paths)}
    sizes = {rid: _size(path) for rid, path in paths.items()}
    bins: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(paths))))]
    load = [0] * len(bins)
    for rid in sorted(paths, key=lambda r: (-sizes[r], order[r])):
        lightest = load.index(min(load))
        bins[lightest].append(rid)
        load[lightest] += sizes[rid]
    return [sorted(b, key=order.__getitem__) for b in bins if b]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def overlapping_promotions(attempts_by_part: list[dict[str, list[str]]]) -> set[str]:
    """Repository ids that recipes of more than one part tried to publish."""
    owner: dict[str, int] = {}
    shared: set[str] = set()
    for number, attempts in enumerate(attempts_by_part):
        for targets in attempts.values():
            for target in targets:
                if owner.setdefault(target, number) != number:
                    shared.add(target)
    return shared
