"""Devices by brand, warm-cache modes, options, YAML text and the validator's own checks.

No Kubernetes cluster can run here; the schema checks stand in for applying the documents.
"""

from __future__ import annotations

import copy

import pytest
from ruamel.yaml import YAML

import servekit
from servekit import k8s
from servekit.errors import ServekitError
from servekit.hardware.lookup import profile_of
from servekit.hardware.device_plugins import TPU_ACCELERATOR_LABEL, TPU_TOPOLOGY_LABEL
from servekit.k8s.cache import RepoDownload
from servekit.k8s.devices import device_request

pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra) is not installed")


@pytest.fixture(scope="module")
def catalog():
    return servekit.Catalog.load()


@pytest.fixture(scope="module")
def profiles(catalog):
    return catalog.documents.taxonomy["hardware_profiles"]


@pytest.fixture(scope="module")
def qwen(catalog):
    return catalog.plan("Qwen/Qwen3.8-27B", hardware="h200")


QWEN_FILES = (RepoDownload("Qwen/Qwen3.8-27B", files=("config.json", "model.safetensors")),)


@pytest.mark.parametrize(("hardware", "resource"), [
    ("h200", "nvidia.com/gpu"), ("mi300x", "amd.com/gpu"), ("arc_pro_b60", "gpu.intel.com/xe"),
    ("ascend_950pr", "huawei.com/npu"), ("ai100_ultra", "qualcomm.com/qaic"), ("trillium", "google.com/tpu"),
])
def test_device_requests_by_brand(profiles, hardware, resource):
    assert dict(device_request(profile_of(profiles[hardware], hardware), 2).resources) == {resource: 2}


@pytest.mark.parametrize(("hardware", "chips", "accelerator", "topology"), [
    ("trillium", 8, "tpu-v6e-slice", "2x4"), ("trillium", 1, "tpu-v6e-slice", "1x1"),
    ("trillium", 2, "tpu-v6e-slice", "2x2"), ("ironwood", 1, "tpu7x", "2x2x1"),
])
def test_tpu_gets_gke_node_selectors(profiles, hardware, chips, accelerator, topology):
    request = device_request(profile_of(profiles[hardware], hardware), chips)
    assert dict(request.node_selector) == {TPU_ACCELERATOR_LABEL: accelerator, TPU_TOPOLOGY_LABEL: topology}
    assert dict(request.resources) == {"google.com/tpu": chips}


def test_tpu_too_large_for_one_host_says_so(profiles):
    request = device_request(profile_of(profiles["trillium"], "trillium"), 16)
    assert TPU_TOPOLOGY_LABEL not in request.node_selector
    assert any("no single-host tpu-v6e-slice topology has 16 chips" in note for note in request.notes)


def test_cpu_hardware_requests_no_device(profiles):
    assert not device_request(profile_of(profiles["xeon6"], "xeon6"), 4).resources


def test_typed_hardware_profile_gives_the_same_documents(catalog, profiles, qwen):
    lookup = pytest.importorskip("servekit.hardware.lookup")
    typed = lookup.profile_of(profiles["h200"], "h200")
    assert k8s.build_manifests(qwen, typed).documents == k8s.build_manifests(qwen, profiles["h200"]).documents


def test_init_container_warms_the_cache(profiles, qwen):
    manifests = k8s.build_manifests(qwen, profiles["h200"], k8s.K8sOptions(warm_cache="init"), QWEN_FILES)
    assert "Job" not in manifests.kinds()
    deployment = next(d for d in manifests.documents if d["kind"] == "Deployment")
    (init,) = deployment["spec"]["template"]["spec"]["initContainers"]
    assert init["image"] == qwen.docker.image
    assert init["command"] == ["python3"] and len(init["args"]) == 3
    assert k8s.problems(manifests.documents) == [] and not manifests.findings


def test_warm_job_runs_before_the_server(profiles, qwen):
    manifests = k8s.build_manifests(qwen, profiles["h200"], downloads=QWEN_FILES)
    job = next(d for d in manifests.documents if d["kind"] == "Job")
    marker = job["spec"]["template"]["spec"]["containers"][0]["args"][-1]
    deployment = next(d for d in manifests.documents if d["kind"] == "Deployment")
    (wait,) = deployment["spec"]["template"]["spec"]["initContainers"]
    assert marker.endswith(".warm") and marker in wait["args"][0]
    other = k8s.build_manifests(qwen, profiles["h200"], downloads=(RepoDownload("Qwen/Qwen3.8-27B", files=(
        "config.json",)),))
    other_job = next(d for d in other.documents if d["kind"] == "Job")
    assert other_job["spec"]["template"]["spec"]["containers"][0]["args"][-1] != marker  # a new list, a new marker


def test_without_downloads_there_is_no_warm_step(profiles, qwen):
    manifests = k8s.build_manifests(qwen, profiles["h200"])
    assert "Job" not in manifests.kinds()
    assert "initContainers" not in next(d for d in manifests.documents if d["kind"] == "Deployment")["spec"][
        "template"]["spec"]
    assert any("nothing to warm" in note for note in manifests.notes)


def test_options_name_namespace_storage(profiles, qwen):
    options = k8s.K8sOptions(namespace="llm", name="qwen", storage_class="fast", cache_size="1Ti",
                             warm_cache="none", model_gb=1000)
    docs = k8s.build_manifests(qwen, profiles["h200"], options).documents
    assert {d["metadata"]["namespace"] for d in docs} == {"llm"}
    claim = docs[0]
    assert claim["metadata"]["name"] == "qwen-hf-cache"
    assert claim["spec"]["storageClassName"] == "fast"
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Ti"
    server = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
    probe = server["startupProbe"]
    assert probe["failureThreshold"] * probe["periodSeconds"] == 130 * 60


@pytest.mark.parametrize("options", [
    k8s.K8sOptions(name="Bad_Name"), k8s.K8sOptions(cache_size="lots"), k8s.K8sOptions(warm_cache="later")])
def test_bad_options_are_clear_errors(profiles, qwen, options):
    with pytest.raises(ServekitError) as err:
        k8s.build_manifests(qwen, profiles["h200"], options)
    assert err.value.fix


def test_yaml_text_round_trips(profiles, qwen):
    manifests = k8s.build_manifests(qwen, profiles["h200"], downloads=QWEN_FILES)
    text = k8s.render_k8s_text(qwen, profiles["h200"], downloads=QWEN_FILES)
    loaded = [d for d in YAML(typ="safe").load_all(text) if d]
    assert loaded == [dict(d) for d in manifests.documents]
    assert text.startswith("# servekit plan Qwen/Qwen3.8-27B")
    assert "\n        - |\n          import glob, json, pathlib, sys\n" in text  # the warm script reads as written


def test_validator_reports_unknown_fields_and_bad_lws(profiles, qwen):
    docs = [copy.deepcopy(d) for d in k8s.build_manifests(qwen, profiles["h200"]).documents]
    docs[-1]["spec"]["bogus"] = 1
    assert [p.path for p in k8s.problems(docs)] == ["spec"]
    with pytest.raises(ServekitError):
        k8s.validate(docs)
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "x"},
           "spec": {"leaderWorkerTemplate": {"size": 0, "restartPolicy": "Sometimes",
                                             "workerTemplate": {"spec": {"containers": [{"name": "c", "oops": 1}]}}}}}
    paths = {p.path for p in k8s.problems([lws])}
    assert "spec/leaderWorkerTemplate/size" in paths
    assert "spec/leaderWorkerTemplate/restartPolicy" in paths
    assert any(p.startswith("spec/leaderWorkerTemplate/workerTemplate") for p in paths)


@pytest.mark.parametrize(("engine", "hardware"), [("max", "h200"), ("vllm-qaic", "ai100_ultra"),
                                                  ("vllm-ascend", "ascend_950pr")])
def test_other_engines_use_their_own_commands(catalog, profiles, engine, hardware):
    plans_translate = pytest.importorskip("servekit.engines.plan_translate")
    try:
        plan = catalog.plan("meta-llama/Llama-3.1-8B-Instruct", hardware=hardware, engine=engine)
        (command,) = plans_translate.translate_plan(plan, engine, hardware=profiles[hardware])
        manifests = k8s.build_manifests(plan, profiles[hardware])
    except ServekitError as err:
        pytest.skip(f"{engine} on {hardware} has no plan for this recipe here: {err}")
    server = next(d for d in manifests.documents if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    main = server["containers"][0]
    assert main["command"] + main["args"] == list(command.command.argv)
    assert main["image"] == (command.command.image or plan.docker.image)
    assert k8s.problems(manifests.documents) == [] and not manifests.findings
