"""Each pod asks for the devices its process drives, under the hardware's device-plugin resource.

No cluster (and no accelerator) can run here: the documents are read as the scheduler would
read a container's ``resources`` and the pod's ``nodeSelector``.
"""

from __future__ import annotations

import dataclasses

import pytest

from servekit import k8s
from servekit.synthesis.plan import Arg, Plan

pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra) is not installed")

PARALLEL_FLAGS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
                  "--data-parallel-size-local")


def _manifests(catalog, plan: Plan, **options) -> k8s.Manifests:
    profile = catalog.documents.taxonomy["hardware_profiles"][plan.selection.hardware]
    manifests = k8s.build_manifests(plan, profile, k8s.K8sOptions(**options))
    assert k8s.problems(manifests.documents) == []
    assert list(manifests.findings) == []
    return manifests


def _servers(manifests: k8s.Manifests) -> dict[str, dict]:
    """workload (and LeaderWorkerSet role) -> its server pod spec."""
    out = {}
    for doc in manifests.documents:
        spec, name = doc["spec"], doc["metadata"]["name"]
        if doc["kind"] == "Deployment" and doc["metadata"]["labels"]["app.kubernetes.io/component"] != "router":
            out[name] = spec["template"]["spec"]
        elif doc["kind"] == "LeaderWorkerSet":
            out[f"{name} leader"] = spec["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
            out[f"{name} worker"] = spec["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    return {k: v for k, v in out.items() if any(c["name"] == "server" for c in v["containers"])}


def _limits(pod: dict) -> dict:
    server = next(c for c in pod["containers"] if c["name"] == "server")
    return dict((server.get("resources") or {}).get("limits") or {})


def _with_parallel(plan: Plan, *tokens: str) -> Plan:
    """The plan's one process with its parallel flags replaced by ``tokens`` (flag, value pairs)."""
    (process,) = plan.processes
    kept = tuple(a for a in process.args if a.flag not in PARALLEL_FLAGS)
    args = tuple(Arg(tokens[i], tokens[i + 1], "test") for i in range(0, len(tokens), 2))
    return dataclasses.replace(plan, processes=(dataclasses.replace(process, args=args + kept),))


@pytest.mark.parametrize(("hardware", "engine", "resource"), [
    ("h200", "vllm", "nvidia.com/gpu"), ("mi300x", "vllm", "amd.com/gpu"), ("trillium", "vllm", "google.com/tpu"),
    ("arc_pro_b60", "vllm", "gpu.intel.com/xe"), ("ascend_950pr", "vllm-ascend", "huawei.com/npu"),
    ("ai100_ultra", "vllm-qaic", "qualcomm.com/qaic"), ("h200", "max", "nvidia.com/gpu"),
])
def test_tensor_parallel_one_asks_one_device(bundled, hardware, engine, resource):
    # named: on some of these devices TP 1 does not hold the model's context, and the plan would take TP 2
    plan = bundled.plan("meta-llama/Llama-3.1-8B-Instruct", hardware=hardware, engine=engine, strategy="single_node_tp")
    assert plan.processes[0].argv()[3:5] == ["--tensor-parallel-size", "1"]
    (pod,) = _servers(_manifests(bundled, plan)).values()
    assert _limits(pod) == {resource: 1}


def test_tpu_pod_selects_a_host_of_its_size(bundled):
    plan = bundled.plan("meta-llama/Llama-3.1-8B-Instruct", hardware="trillium", strategy="single_node_tp")
    (pod,) = _servers(_manifests(bundled, plan)).values()
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                   "cloud.google.com/gke-tpu-topology": "1x1"}


def test_cpu_plan_asks_no_device(bundled):
    plan = bundled.plan("meta-llama/Llama-3.1-8B-Instruct", hardware="xeon6")
    (pod,) = _servers(_manifests(bundled, plan)).values()
    assert _limits(pod) == {}
    assert "nodeSelector" not in pod


@pytest.mark.parametrize(("tokens", "devices"), [
    (("--tensor-parallel-size", "4", "--pipeline-parallel-size", "2"), 8),
    (("--tensor-parallel-size", "1", "--data-parallel-size", "8"), 8),
    (("--tensor-parallel-size", "2", "--data-parallel-size", "8", "--data-parallel-size-local", "4"), 8),
    (("--tensor-parallel-size", "2"), 2),
])
def test_one_pod_asks_its_parallel_layout(bundled, tokens, devices):
    plan = _with_parallel(bundled.plan("meta-llama/Llama-3.1-8B-Instruct", hardware="h200"), *tokens)
    (pod,) = _servers(_manifests(bundled, plan)).values()
    assert _limits(pod) == {"nvidia.com/gpu": devices}


def test_data_parallel_local_eight_by_tp_one_asks_eight_per_node(reference):
    plan = reference.plan("moonshotai/Kimi-K2.5", hardware="h200", strategy="multi_node_dep", nodes=2)
    head = [str(t) for t in plan.role("head")[0].argv()]
    assert head[head.index("--data-parallel-size-local") + 1] == "8" and "--tensor-parallel-size" not in head
    pods = _servers(_manifests(reference, plan))
    assert sorted(pods) == ["moonshotai-kimi-k2-5 leader", "moonshotai-kimi-k2-5 worker"]
    assert [_limits(p) for p in pods.values()] == [{"nvidia.com/gpu": 8}] * 2


def test_tensor_parallel_over_nodes_splits_the_world(reference):
    plan = reference.plan("MiniMaxAI/MiniMax-M2", hardware="h200", strategy="multi_node_tp_pp", nodes=2)
    head = [str(t) for t in plan.role("head")[0].argv()]
    assert head[head.index("--tensor-parallel-size") + 1] == "8" and head[head.index("--nnodes") + 1] == "2"
    pods = _servers(_manifests(reference, plan))
    assert [_limits(p) for p in pods.values()] == [{"nvidia.com/gpu": 8}] * 2


def test_prefill_and_decode_pools_ask_their_own_devices(reference):
    """A one-node PD plan splits the node: each pool's pod asks for its half, and the plan's host
    device indexes (CUDA_VISIBLE_DEVICES=4,5,6,7) stay out of the pods, where they would point past
    the four devices the plugin hands the decode pod."""
    plan = reference.plan("IndexTeam/IndexTTS-2.5", hardware="h200", strategy="pd_cluster")
    assert {p.env_map()["CUDA_VISIBLE_DEVICES"] for p in plan.processes} == {"0,1,2,3", "4,5,6,7"}
    manifests = _manifests(reference, plan)
    pods = _servers(manifests)
    assert {name: _limits(pod) for name, pod in pods.items()} == {
        "indexteam-indextts-2-5-prefill": {"nvidia.com/gpu": 4}, "indexteam-indextts-2-5-decode": {"nvidia.com/gpu": 4}}
    for pod in pods.values():
        assert "CUDA_VISIBLE_DEVICES" not in {e["name"] for e in pod["containers"][0]["env"]}
    assert any(n.startswith("CUDA_VISIBLE_DEVICES of the plan is left out") for n in manifests.notes)


def test_data_parallel_pools_ask_their_local_ranks(reference):
    plan = reference.plan("deepseek-ai/DeepSeek-V4-Flash", hardware="h200", strategy="pd_cluster")
    pods = _servers(_manifests(reference, plan))
    assert {_limits(p)["nvidia.com/gpu"] for p in pods.values()} == {8}


def test_device_resource_override_is_used(bundled):
    plan = bundled.plan("meta-llama/Llama-3.1-8B-Instruct", hardware="ascend_950pr", engine="vllm-ascend")
    (pod,) = _servers(_manifests(bundled, plan, device_resource="huawei.com/Ascend910")).values()
    assert _limits(pod) == {"huawei.com/Ascend910": 1}


def test_shared_memory_is_capped_at_the_plans_size(bundled):
    plan = bundled.plan("meta-llama/Llama-3.1-8B-Instruct", hardware="xeon6")  # docker run --shm-size 16g
    (pod,) = _servers(_manifests(bundled, plan)).values()
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    server = pod["containers"][0]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in server["volumeMounts"]
