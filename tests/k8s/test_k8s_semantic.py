"""servekit's own checks of the documents: each one finds the problem it is about.

The documents servekit renders pass them (test_manifests.py checks every catalog shape); here
each check meets a document broken the way a hand edit, an older servekit or a wrong rule would
break it, and must report it as an error finding with a fix.
"""

from __future__ import annotations

import copy

import pytest

import servekit
from servekit import k8s
from servekit.findings import Finding
from servekit.k8s.cache import RepoDownload

pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra) is not installed")

FILES = (RepoDownload("meta-llama/Llama-3.1-8B-Instruct", files=("config.json", "model.safetensors",
                                                                  "tokenizer.json")),)
OLD_WARM = ("pip install --no-cache-dir servekit==0.1.0 && servekit warm-cache meta-llama/Llama-3.1-8B-Instruct "
            "--hardware h200 && touch /root/.cache/huggingface/.servekit/x.warm")


@pytest.fixture(scope="module")
def catalog():
    return servekit.Catalog.load()


def _build(catalog, hardware="h200", options=None, downloads=FILES, **plan_kw):
    plan = catalog.plan("meta-llama/Llama-3.1-8B-Instruct", hardware=hardware, **plan_kw)
    profile = catalog.documents.taxonomy["hardware_profiles"][hardware]
    options = options or k8s.K8sOptions()
    manifests = k8s.build_manifests(plan, profile, options, downloads)
    assert list(manifests.findings) == []
    return plan, profile, options, [copy.deepcopy(d) for d in manifests.documents]


def _pod(docs, kind="Deployment") -> dict:
    return next(d for d in docs if d["kind"] == kind)["spec"]["template"]["spec"]


def _server(docs) -> dict:
    return _pod(docs)["containers"][0]


def _codes(plan, profile, options, docs, downloads=FILES) -> list[Finding]:
    found = k8s.check_manifests(docs, plan, profile, options, downloads)
    assert all(f.is_error and f.fix for f in found)
    return found


def test_a_whole_node_for_a_tp1_server_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    _server(docs)["resources"] = {"limits": {"nvidia.com/gpu": 8}, "requests": {"nvidia.com/gpu": 8}}
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-devices"
    assert "asks nvidia.com/gpu: 8 but its process drives 1 device(s) (TP 1)" in finding.message
    assert finding.fix == "request nvidia.com/gpu: 1 (limits and requests)"


def test_a_device_of_another_vendor_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog, hardware="mi300x")
    _server(docs)["resources"] = {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 1}}
    assert [f.code for f in _codes(plan, profile, options, docs)] == ["k8s-devices"]


def test_a_device_on_cpu_hardware_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog, hardware="xeon6")
    _server(docs)["resources"] = {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 1}}
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-devices" and finding.fix == "request no device (limits and requests)"


def test_a_tpu_pod_on_too_small_a_host_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog, hardware="trillium", strategy="single_node_tp")  # TP 1
    server = _server(docs)
    server["resources"] = {"limits": {"google.com/tpu": 1}, "requests": {"google.com/tpu": 1}}
    _pod(docs)["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "bogus"
    assert [f.code for f in _codes(plan, profile, options, docs)] == ["k8s-tpu-selector"]


@pytest.mark.parametrize("probe", ["startupProbe", "readinessProbe", "livenessProbe"])
def test_a_missing_probe_is_a_finding(catalog, probe):
    plan, profile, options, docs = _build(catalog)
    del _server(docs)[probe]
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-probes" and probe in finding.message


def test_a_probe_off_the_health_path_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    _server(docs)["readinessProbe"]["httpGet"]["path"] = "/v1/models"
    (finding,) = _codes(plan, profile, options, docs)
    assert "GET /health port 8000" in finding.message


def test_a_startup_probe_shorter_than_a_load_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    _server(docs)["startupProbe"]["failureThreshold"] = 6
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-probes" and "gives up after 60 s" in finding.message


def test_shared_memory_not_mounted_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    server = _server(docs)
    server["volumeMounts"] = [m for m in server["volumeMounts"] if m["mountPath"] != "/dev/shm"]
    assert [f.code for f in _codes(plan, profile, options, docs)] == ["k8s-shm"]


def test_shared_memory_without_the_plans_size_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog, hardware="xeon6")  # docker run --shm-size 16g
    for volume in _pod(docs)["volumes"]:
        volume.get("emptyDir", {}).pop("sizeLimit", None)
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-shm" and "sizeLimit 16Gi" in finding.message


def test_a_host_device_index_in_a_pod_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    _server(docs)["env"].append({"name": "CUDA_VISIBLE_DEVICES", "value": "4,5,6,7"})
    assert [f.code for f in _codes(plan, profile, options, docs)] == ["k8s-host-devices"]


def test_the_old_warm_job_that_installs_servekit_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    job = _pod(docs, "Job")["containers"][0]
    job["image"], job["command"], job["args"] = "python:3.12-slim", ["/bin/sh", "-c"], [OLD_WARM]
    codes = [f.code for f in _codes(plan, profile, options, docs)]
    assert "k8s-servekit-package" in codes and "k8s-warm" in codes


def test_a_warm_step_with_other_files_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    other = (RepoDownload("meta-llama/Llama-3.1-8B-Instruct", files=("config.json",)),)
    (finding,) = _codes(plan, profile, options, docs, downloads=other)
    assert finding.code == "k8s-warm" and "exactly the plan's files" in finding.message


def test_a_server_that_does_not_wait_for_the_job_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    del _pod(docs)["initContainers"]
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-warm" and "does not wait" in finding.message


def test_an_init_warm_step_missing_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog, options=k8s.K8sOptions(warm_cache="init"))
    del _pod(docs)["initContainers"]
    assert [f.code for f in _codes(plan, profile, options, docs)] == ["k8s-warm"]


def test_a_process_without_a_pod_is_a_finding(catalog):
    plan, profile, options, docs = _build(catalog)
    docs = [d for d in docs if d["kind"] != "Deployment"]
    (finding,) = _codes(plan, profile, options, docs)
    assert finding.code == "k8s-processes" and "serve 0" in finding.message


def test_findings_lead_the_printed_text(catalog):
    plan, profile, options, docs = _build(catalog)
    _server(docs)["env"].append({"name": "CUDA_VISIBLE_DEVICES", "value": "0"})
    findings = tuple(_codes(plan, profile, options, docs))
    text = k8s.manifests_text(k8s.Manifests(tuple(docs), (), findings), k8s.plan_header(plan))
    assert "\n# error: Deployment/meta-llama-llama-3-1-8b-instruct: CUDA_VISIBLE_DEVICES picks devices" in text
