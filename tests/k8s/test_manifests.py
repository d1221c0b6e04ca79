"""Kubernetes manifests for every deploy shape and platform of the bundled and the reference catalogs.

No Kubernetes cluster can run here, so nothing is applied: the schema checks stand in for it.
Built-in kinds are validated against the OpenAPI schemas of a pinned Kubernetes version
(kubernetes-validate, strict), LeaderWorkerSets against the schema written from their published
CRD plus the Kubernetes PodTemplateSpec schema for their templates. servekit's own semantic
checks (devices, probes, shared memory, the warm step) must find nothing. Commands are checked by
replaying what the kubelet and the LeaderWorkerSet controller do (``resolve_command``) and
comparing with the plan's argv after the documented placeholder bindings.
"""

from __future__ import annotations

import pytest

from servekit import k8s
from servekit.app.k8s_plan import warm_downloads
from servekit.engines.vllm.layout import parallel_layout
from servekit.errors import ServekitError
from servekit.hardware.lookup import profile_of
from servekit.synthesis.plan import Plan
from servekit.warm.hub import HubSettings

from k8s_shapes import PLATFORMS, expected_argv, platform_plans, pod_values, shape_plans, templates

pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra) is not installed")


@pytest.fixture()
def offline(tmp_path) -> HubSettings:
    """The hub unreachable and an empty cache: the warm step falls back to servekit's patterns."""
    return HubSettings.from_env(cache_dir=tmp_path / "hub", offline=True)


def _profile(catalog, plan: Plan):
    return catalog.documents.taxonomy["hardware_profiles"][plan.selection.hardware]


def _workload_of(plan: Plan, proc) -> str:
    """The pool a process belongs to ('' outside prefill/decode plans)."""
    return proc.role.removesuffix("_node") if plan.deploy_type == "pd_cluster" else ""


def check_plan(catalog, plan: Plan, settings: HubSettings) -> k8s.Manifests:
    """Schema-valid, no semantic finding; every process's command is its argv; devices as its
    parallel layout drives them, under the hardware's device-plugin resource."""
    profile = _profile(catalog, plan)
    manifests = k8s.build_manifests(plan, profile, downloads=warm_downloads(plan, settings))
    assert k8s.problems(manifests.documents) == []
    assert list(manifests.findings) == [], plan.selection
    base = manifests.documents[0]["metadata"]["labels"]["app.kubernetes.io/name"]
    found = templates(manifests.documents)
    plugin = profile_of(profile, plan.selection.hardware).device_plugin
    translated = plan.selection.engine != "vllm"
    for proc in plan.processes:
        pool = _workload_of(plan, proc)
        kind, leader, worker, size, replicas = found[f"{base}-{pool}" if pool else base]
        in_group = kind == "LeaderWorkerSet"
        container = leader if proc.rank == 0 else worker
        if not translated:
            got = k8s.resolve_command(container, pod_values(in_group, proc.rank))
            assert got == expected_argv(proc.argv(), in_group), (plan.selection, proc.role, proc.rank)
        devices = parallel_layout([str(t) for t in proc.argv()]).devices_per_node
        want = {plugin.resource: devices} if plugin else {}
        assert {k: v for k, v in (container.get("resources") or {}).get("limits", {}).items() if "/" in k} == want
    check_sizes(plan, found, base)
    text = k8s.dump_documents(manifests.documents)
    for placeholder in ("$HEAD_IP", "$IFACE_NAME", "pip install --no-cache-dir servekit"):
        assert placeholder not in text
    return manifests


def check_sizes(plan: Plan, found, base: str) -> None:
    """LeaderWorkerSet size = nodes (workers = nodes - 1); kv stores run ``instances`` groups."""
    if plan.deploy_type == "pd_cluster":
        for role in ("prefill", "decode"):
            nodes = dict(plan.role(role)[0].meta)["nodes"]
            kind, _, _, size, _ = found[f"{base}-{role}"]
            assert (kind, size) == (("LeaderWorkerSet", nodes) if nodes > 1 else ("Deployment", 1))
        return
    kind, _, _, size, replicas = found[base]
    nodes = plan.selection.node_count
    if plan.deploy_type == "kv_store_lb":
        assert (kind, size, replicas) == ("LeaderWorkerSet", nodes, int(plan.extra("instances") or 1))
    elif plan.role("head"):
        assert (kind, size) == ("LeaderWorkerSet", nodes)
        assert len(plan.role("worker")) == size - 1
    else:
        assert kind == "Deployment"


def test_bundled_catalog_shapes_validate(bundled, offline):
    plans = shape_plans(bundled)
    assert plans, "the bundled catalog produced no plan"
    for plan in plans.values():
        check_plan(bundled, plan, offline)


def test_bundled_catalog_on_every_platform_family(bundled, offline):
    plans = platform_plans(bundled, bundled.recipes)
    rendered = set()
    for (hardware, engine, _), plan in plans.items():
        try:
            check_plan(bundled, plan, offline)
        except ServekitError as err:  # an engine that cannot run this recipe says so before rendering
            assert "cannot run this plan" in err.message or "no container image" in err.message, err.message
            continue
        rendered.add((hardware, engine))
    assert rendered == set(PLATFORMS)


def test_reference_catalog_shapes_validate(reference, offline):
    plans = shape_plans(reference)
    types = {key[0] for key in plans}
    assert {"single_node", "multi_node", "pd_cluster", "kv_store_lb"} <= types
    strategies = {key[1] for key in plans}
    assert {"multi_node_tp", "multi_node_dep", "pd_cluster"} <= strategies
    for plan in plans.values():
        check_plan(reference, plan, offline)


def test_reference_catalog_on_every_platform_family(reference, offline):
    recipes = reference.recipes[::25]
    rendered = set()
    for (hardware, engine, _), plan in platform_plans(reference, recipes).items():
        try:
            check_plan(reference, plan, offline)
        except ServekitError as err:
            assert any(why in err.message for why in ("cannot run this plan", "no container image",
                                                      "its nodes join through Ray")), err.message
            continue
        rendered.add((hardware, engine))
    assert {"h200", "mi300x", "trillium", "xeon6", "ascend_950pr"} <= {hw for hw, _ in rendered}


def test_qwen_on_h200_is_a_deployment_service_and_claim(bundled):
    plan = bundled.plan("Qwen/Qwen3.8-27B", hardware="h200")
    manifests = k8s.build_manifests(plan, _profile(bundled, plan), k8s.K8sOptions(warm_cache="none"))
    assert sorted(manifests.kinds()) == ["Deployment", "PersistentVolumeClaim", "Service"]
    deployment = next(d for d in manifests.documents if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    server = pod["containers"][0]
    assert server["command"] + server["args"] == [str(t) for t in plan.processes[0].argv()]
    assert server["image"] == plan.docker.image
    assert "--tensor-parallel-size" in server["args"] and server["args"][server["args"].index(
        "--tensor-parallel-size") + 1] == "1"
    assert server["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert {"name": "HF_HOME", "value": "/root/.cache/huggingface"} in server["env"]
    assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
    startup = server["startupProbe"]
    assert startup["httpGet"] == {"path": "/health", "port": 8000}
    assert startup["failureThreshold"] * startup["periodSeconds"] >= 60 * 60


def test_two_node_dep_is_a_leader_worker_set_of_two(reference, offline):
    plan = reference.plan("moonshotai/Kimi-K2.5", hardware="h200", strategy="multi_node_dep", nodes=2)
    manifests = check_plan(reference, plan, offline)
    (lws,) = [d for d in manifests.documents if d["kind"] == "LeaderWorkerSet"]
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    head = [str(t) for t in plan.role("head")[0].argv()]
    assert leader["command"] + leader["args"] == [
        "$(LWS_LEADER_ADDRESS)" if t == "$HEAD_IP" else t for t in head]


def test_three_node_dep_start_rank_comes_from_the_worker_index(reference):
    plan = reference.plan("moonshotai/Kimi-K2.5", hardware="h200", strategy="multi_node_dep", nodes=3)
    manifests = k8s.build_manifests(plan, _profile(reference, plan))
    (lws,) = [d for d in manifests.documents if d["kind"] == "LeaderWorkerSet"]
    worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    assert worker["command"] == ["/bin/sh", "-c"]
    assert '"$((LWS_WORKER_INDEX * 8))"' in worker["args"][0]
    for proc in plan.role("worker"):
        got = k8s.resolve_command(worker, pod_values(True, proc.rank))
        assert got == expected_argv(proc.argv(), True)
