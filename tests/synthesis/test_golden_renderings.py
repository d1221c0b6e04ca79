"""The reference API's rendering objects (single, multi-node, PD, Mooncake) re-rendered key for key.

Only fields named by an applicable entry of ``servekit.differences.DIFFERENCES`` may differ.
"""

from __future__ import annotations

import collections
import json
import tarfile

import pytest

from servekit.catalog.domain import recipe_of, strategies_of
from servekit.differences import CONTAINER_FORM, explaining
from servekit.synthesis import selection as rules
from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import resolve_selection
from servekit.synthesis.synthesize import synthesize

from testing.shared import REFERENCE

GOLDEN_TAR = REFERENCE / "golden" / "api-visible.tar.xz"
PAGE_ONLY = {"strategy_spec", "hardware_profile", "alternatives", "by_hardware"}


def _renderings(recipe_ids):
    """(recipe id, document) for every per-hardware / per-strategy rendering of a known recipe."""
    with tarfile.open(GOLDEN_TAR, "r:xz") as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if not member.isfile() or not name.endswith(".json"):
                continue
            for marker in ("/hw/", "/strategies/"):
                rid = name.split(marker)[0]
                if marker in name and rid in recipe_ids:
                    yield rid, json.loads(tar.extractfile(member).read())
                    break


def _flatten(doc: dict) -> dict:
    out = {}
    for key, value in doc.items():
        if key in ("prefill", "decode") and isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def test_reference_renderings(reference_docs):
    if not GOLDEN_TAR.is_file():
        pytest.skip("../shared/reference/golden/api-visible.tar.xz is not present")
    docs = reference_docs
    profiles = docs.taxonomy["hardware_profiles"]
    strategies = strategies_of(docs)
    counts = collections.Counter()
    for rid, golden in _renderings(set(docs.recipes)):
        recipe = recipe_of(docs, rid)
        hw, variant = golden["hardware"], golden["variant"]
        kwargs = {}
        strategy = golden["strategy"]
        if golden["deploy_type"] == "kv_store_lb":
            kwargs["kv_offload"], strategy = strategy, golden["serving_strategy"]
        if golden["deploy_type"] == "pd_cluster":
            kwargs["pd_nodes"] = rules.pd_pool_nodes(profiles[hw], recipe.variants[variant], recipe, strategies, hw)
        sel = resolve_selection(docs, rid, hardware=hw, variant=variant, strategy=strategy,
                                node_count=golden["node_count"], features=rules.default_features(recipe, hw, variant),
                                **kwargs)
        ours = _flatten(render_plan(synthesize(docs, sel)))
        want = _flatten({k: v for k, v in golden.items() if k not in PAGE_ONLY})
        differing = {k for k in set(want) | set(ours) if want.get(k) != ours.get(k)}
        counts[golden["deploy_type"]] += 1
        if not differing:
            continue
        found = explaining(docs, sel)
        allowed = {f for d in found for f in d.fields}
        unexplained = {k for k in differing if k not in allowed}
        assert not unexplained, (rid, hw, golden["strategy"], {k: (want.get(k), ours.get(k)) for k in unexplained})
        container_form = {f for d in found if d.id in CONTAINER_FORM for f in d.fields}
        counts["container form" if differing <= container_form else "explained"] += 1
    print(f"\nreference renderings: {dict(counts)}")
    assert counts["pd_cluster"] and counts["kv_store_lb"] and counts["multi_node"] and counts["single_node"]
    # the docker wrapping differs by rule (host network across machines, one flag per setting, the
    # image's entrypoint); beyond it, nearly every rendering equals the reference's
    assert counts["container form"] > 0
    assert counts["explained"] < 0.05 * sum(counts[k] for k in ("single_node", "multi_node", "pd_cluster", "kv_store_lb"))
