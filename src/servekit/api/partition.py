"""Split a catalog's recipes into balanced, independent parts for a parallel build.

Two recipes depend on each other only when both promote a variant to the same repository
id (the later one's files replace the earlier one's), so such recipes share a part. Parts
keep catalog order inside, and are balanced by a rough cost: one unit per published id.
"""

from __future__ import annotations

from servekit.api.recipe_doc import promotion_target, public_id
from servekit.catalog.documents import CatalogDocuments


def promoted_ids(docs: CatalogDocuments, recipe_id: str, known: set[str]) -> list[str]:
    variants = docs.recipes[recipe_id].get("variants") or {}
    targets = (promotion_target(v) for v in variants.values())
    return [t for t in targets if t is not None and t not in known]


def _groups(docs: CatalogDocuments, known: set[str]) -> list[list[str]]:
    """Recipes in catalog order, grouped where they promote a shared id (union-find)."""
    ids = list(docs.recipes)
    root = list(range(len(ids)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    first_promoter: dict[str, int] = {}
    for index, rid in enumerate(ids):
        for target in promoted_ids(docs, rid, known):
            if target in first_promoter:
                root[find(index)] = find(first_promoter[target])
            else:
                first_promoter[target] = index
    groups: dict[int, list[str]] = {}
    for index, rid in enumerate(ids):
        groups.setdefault(find(index), []).append(rid)
    return list(groups.values())


def partition_recipes(docs: CatalogDocuments, jobs: int) -> list[list[str]]:
    """At most ``jobs`` non-empty parts of recipe ids, each in catalog order."""
    known = {public_id(rid) for rid in docs.recipes}
    order = {rid: i for i, rid in enumerate(docs.recipes)}
    groups = _groups(docs, known)
    cost = {tuple(g): sum(1 + len(promoted_ids(docs, r, known)) for r in g) for g in groups}
    bins: list[list[str]] = [[] for _ in range(max(1, jobs))]
    load = [0] * len(bins)
    for group in sorted(groups, key=lambda g: -cost[tuple(g)]):
        lightest = load.index(min(load))
        bins[lightest].extend(group)
        load[lightest] += cost[tuple(group)]
    return [sorted(b, key=order.__getitem__) for b in bins if b]
