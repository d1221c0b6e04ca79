"""Plans of every deploy shape a catalog produces, and the documented placeholder bindings."""

from __future__ import annotations

import re
from typing import Any

from servekit.errors import ServekitError

LEADER = "leader.example"
POD_IP = "10.1.2.3"
DP_RPC_PORT = "29550"
PLACEHOLDER = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def shape_plans(catalog, node_counts=(2, 3)) -> dict[tuple, Any]:
    """First plan found for each (deploy type, strategy, kv store, nodes) over the catalog's recipes."""
    found: dict[tuple, Any] = {}
    kv_stores = [None, *sorted(catalog.documents.kv_store)]
    for recipe in catalog.recipes:
        for strategy in catalog.strategies:
            nodes_options = node_counts if strategy.startswith("multi_node") else (None,)
            for kv in kv_stores:
                for nodes in nodes_options:
                    key = (strategy, kv, nodes)
                    if any(k[1:] == key for k in found):
                        continue
                    try:
                        plan = catalog.plan(recipe, strategy=strategy, kv_offload=kv, nodes=nodes)
                    except ServekitError:
                        continue
                    if nodes and len(plan.processes) < nodes:
                        continue  # a shape that serves from one process whatever the node count
                    found[(plan.deploy_type, *key)] = plan
    return found


def expected_argv(argv, in_group: bool, node: int = 1) -> list[str]:
    """The plan's argv with the documented bindings applied for a pod's concrete values."""
    def bind(m: re.Match) -> str:
        name = m.group(1)
        if name == "HEAD_IP" or name == "VLLM_INSTANCE_1" or re.fullmatch(r"[A-Z]+_NODE_1", name):
            return LEADER if in_group else POD_IP
        if name.endswith("_DP_RPC_PORT"):
            return DP_RPC_PORT
        raise AssertionError(f"placeholder ${name} has no documented binding")

    return [PLACEHOLDER.sub(bind, str(t)) for t in argv]


def pod_values(in_group: bool, rank: int = 0) -> dict[str, str]:
    values = {"POD_IP": POD_IP}
    if in_group:
        values.update({"LWS_LEADER_ADDRESS": LEADER, "LWS_WORKER_INDEX": str(rank)})
    return values


def templates(docs) -> dict[str, tuple[str, dict, dict | None, int, int]]:
    """workload name -> (kind, leader/only container, worker container, size, replicas)."""
    out = {}
    for doc in docs:
        if doc["kind"] == "Deployment":
            spec = doc["spec"]["template"]["spec"]
            out[doc["metadata"]["name"]] = ("Deployment", spec["containers"][0], None, 1, doc["spec"]["replicas"])
        elif doc["kind"] == "LeaderWorkerSet":
            lwt = doc["spec"]["leaderWorkerTemplate"]
            out[doc["metadata"]["name"]] = ("LeaderWorkerSet", lwt["leaderTemplate"]["spec"]["containers"][0],
                                            lwt["workerTemplate"]["spec"]["containers"][0], lwt["size"],
                                            doc["spec"]["replicas"])
    return out


PLATFORMS = (
    ("h200", "vllm"), ("b200", "vllm"), ("l40s", "vllm"), ("mi300x", "vllm"), ("trillium", "vllm"),
    ("ironwood", "vllm"), ("arc_pro_b60", "vllm"), ("xeon6", "vllm"), ("ascend_950pr", "vllm-ascend"),
    ("ai100_ultra", "vllm-qaic"), ("h200", "max"), ("h200", "sglang"),
)
"""(hardware, engine) pairs of every platform family servekit renders for Kubernetes."""


def platform_plans(catalog, recipes, platforms=PLATFORMS) -> dict[tuple[str, str, str], Any]:
    """A plan of each recipe on each platform (the catalog's default variant and strategy), where one exists."""
    found = {}
    for hardware, engine in platforms:
        if hardware not in catalog.hardware:
            continue
        for recipe in recipes:
            try:
                found[(hardware, engine, recipe)] = catalog.plan(recipe, hardware=hardware, engine=engine)
            except ServekitError:
                continue
    return found
