"""Replay every golden selection through the batch planner and compare with the reference.

A field may differ only where an entry of ``servekit.differences.DIFFERENCES`` explains it,
and then it must differ exactly as that entry says.
"""

from __future__ import annotations

import collections
from dataclasses import replace

from servekit.differences import DIFFERENCES
from servekit.synthesis.args import feature_blocks
from servekit.app.batch import plan_request
from servekit.synthesis.context import build_context
from servekit.synthesis.docker import DEFAULT_IMAGES
from servekit.synthesis.resolve import selection_from_request


def _golden_fields(line: dict) -> dict:
    out = {"deploy_type": line["deploy_type"], "docker_image": line.get("docker_image")}
    if line["deploy_type"] == "pd_cluster":
        for role in ("prefill", "decode"):
            out[f"{role}.argv"] = line[f"{role}_argv"]
            out[f"{role}.env"] = line[f"{role}_env"]
    elif "head_argv" in line:
        out.update(head_argv=line["head_argv"], worker_argvs=line["worker_argvs"], env=line["env"])
    else:
        out.update(argv=line["argv"], env=line["env"])
    return out


def _our_fields(rendered: dict, golden: dict) -> dict:
    out = {}
    for key in golden:
        if "." in key:
            role, field = key.split(".")
            out[key] = rendered[role][field]
        else:
            out[key] = rendered.get(key)
    return out


def _units(argv: list) -> list[tuple]:
    units, i = [], 3
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if isinstance(tok, str) and tok.startswith("-") and nxt is not None and not str(nxt).startswith("-"):
            units.append((tok, nxt))
            i += 2
        else:
            units.append((tok,))
            i += 1
    return units


def _check_feature_env(docs, sel, golden, ours, fields):
    ctx = build_context(docs, sel)
    added = {}
    for block, _ in feature_blocks(ctx, "env"):
        added.update(block or {})
    for key in fields:
        if key.endswith("env"):
            assert ours[key] == {**golden[key], **added}, key
    return {k for k in fields if k.endswith("env")}


def _check_exclusive(docs, sel, golden, ours, fields):
    dropped_ctx = build_context(docs, replace(sel, features=sel.dropped_features))
    loser = {tuple(u) for block, _ in feature_blocks(dropped_ctx, "args") for u in _units(["", "", "", *(block or [])])}
    assert loser, "a dropped feature should contribute arguments"
    explained = set()
    for key in fields:
        if "argv" not in key:
            continue
        argvs = golden[key] if key == "worker_argvs" else [golden[key]]
        mine = ours[key] if key == "worker_argvs" else [ours[key]]
        for g, o in zip(argvs, mine, strict=True):
            assert [u for u in _units(g) if u not in loser] == [u for u in _units(o) if u not in loser], key
        explained.add(key)
    return explained


def _check_ascend(docs, sel, golden, ours, fields):
    assert "docker_image" in fields
    override = ((docs.recipes[sel.recipe_id]["variants"].get(sel.variant) or {}).get("hardware_overrides")
                or {}).get(sel.hardware, {}).get("docker_image")
    assert ours["docker_image"] == (override or DEFAULT_IMAGES["npu"])
    assert golden["docker_image"].startswith("vllm/vllm-openai")  # the NVIDIA image the reference renders
    return {"docker_image"}


def _split_spaced(argv: list) -> list:
    from servekit.catalog.spaced_args import split_spaced_flag

    return [part for tok in argv for part in (split_spaced_flag(tok) or (tok,))]


def _check_spaced(docs, sel, golden, ours, fields):
    """Ours is the reference's argv with each one-item flag-and-value split in two (and deduped:
    the reference keeps a spaced item beside the same flag written as two items)."""
    explained = set()
    for key in fields:
        if "argv" not in key:
            continue
        argvs = golden[key] if key == "worker_argvs" else [golden[key]]
        mine = ours[key] if key == "worker_argvs" else [ours[key]]
        for g, o in zip(argvs, mine, strict=True):
            assert any(" " in str(t) and str(t).startswith("-") for t in g), key
            assert not any(" " in str(t) and str(t).startswith("-") for t in o), key
            assert {u[0] for u in _units(_split_spaced(g))} == {u[0] for u in _units(o)}, key
        explained.add(key)
    return explained


def _without_rendezvous(argv: list) -> list:
    """``argv`` without vLLM's multiprocessing rendezvous flags and their values."""
    from servekit.synthesis.nodes import MP_FLAGS

    return [u for unit in _units(argv) if unit[0] not in MP_FLAGS for u in unit]


def _check_tpu_ray(docs, sel, golden, ours, fields):
    """Ours is the Ray form of the reference's rendezvous: the head's argv without the rendezvous
    flags, one ``ray start`` joining the head per worker, TPU_MULTIHOST_BACKEND=ray added to the env."""
    assert ours["head_argv"][:3] == golden["head_argv"][:3]
    assert _without_rendezvous(ours["head_argv"]) == _without_rendezvous(golden["head_argv"])
    assert "--nnodes" in golden["head_argv"]
    assert ours["worker_argvs"] == [["ray", "start", "--address", "$HEAD_IP:6379", "--node-ip-address", "$NODE_IP",
                                     "--block"]] * len(golden["worker_argvs"])
    assert ours["env"] == {**golden["env"], "TPU_MULTIHOST_BACKEND": "ray"}
    return {"head_argv", "worker_argvs", "env"} & set(fields)


CHECKS = {
    "tpu-hosts-through-ray": _check_tpu_ray,
    "spaced-argument-split": _check_spaced,
    "feature-env": _check_feature_env,
    "exclusive-features": _check_exclusive,
    "ascend-image": _check_ascend,
}


def test_every_difference_has_a_check_or_its_own_test():
    for diff in DIFFERENCES:
        assert diff.id in CHECKS or not diff.test.startswith("tests/synthesis/test_golden_selections.py"), diff.id


def test_golden_selections(reference_docs, golden_selections):
    docs = reference_docs
    counts = collections.Counter()
    for line in golden_selections:
        rendered = plan_request(docs, line)
        assert "error" not in rendered, (line, rendered)
        golden = _golden_fields(line)
        ours = _our_fields(rendered, golden)
        differing = {k for k in golden if golden[k] != ours[k]}
        if not differing:
            counts["identical"] += 1
            continue
        sel = selection_from_request(docs, line)
        explained: set[str] = set()
        for diff in DIFFERENCES:
            if diff.id in CHECKS and diff.applies(docs, sel):
                explained |= CHECKS[diff.id](docs, sel, golden, ours, differing)
                counts[diff.id] += 1
        assert differing <= explained, (line, {k: (golden[k], ours[k]) for k in differing - explained})
        counts["explained"] += 1
    print(f"\ngolden selections: {len(golden_selections)} lines, {dict(counts)}")
    assert counts["identical"] + counts["explained"] == len(golden_selections)
    # every line a difference of the command's structure leaves alone (the TPU hosts' Ray form
    # rewrites every multi-host TPU line) is, with few exceptions, the reference's exactly
    assert counts["identical"] > 0.95 * (len(golden_selections) - counts["tpu-hosts-through-ray"])
    for diff_id in CHECKS:
        assert counts[diff_id] > 0, f"difference {diff_id} explains no golden line"
