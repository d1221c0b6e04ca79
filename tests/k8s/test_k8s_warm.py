"""The warm step of the Kubernetes form: exactly the plan's files, fetched without servekit.

A loopback hub (``testing.hub_server``) serves tiny repos under the plan's repo ids, so the real
``huggingface_hub`` client lists and downloads them as it would from huggingface.co. No cluster
runs here: the warm container's own command (``python3 -c <script> <spec> <marker>``) is run
with this interpreter and the pinned huggingface_hub, with the pod's cache volume mapped to a
temporary folder.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from testing.hub_server import HubServer
from testing.tiny_model import add_duplicate_formats, write_tiny_llama
from ruamel.yaml import YAML

import servekit
from servekit import k8s
from servekit.app.k8s_plan import warm_downloads
from servekit.cli.app import main
from servekit.k8s.options import HF_CACHE_PATH
from servekit.warm.engine_steps import EngineTarget
from servekit.warm.hub import HubSettings, storage_folder
from servekit.warm.runner import WarmOptions, warm_cache

MODEL, DRAFT = "Qwen/Qwen3.8-27B", "incoai/Qwen3.8-27B-DFlash2"
DFLASH = {"enable": ["spec_decoding"], "modes": {"spec_decoding": "dflash"}}


@pytest.fixture(scope="module")
def repo_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("repos")
    model = write_tiny_llama(root / "model", shards=2)
    add_duplicate_formats(model)
    return {MODEL: model, DRAFT: write_tiny_llama(root / "draft", seed=3)}


@pytest.fixture()
def hub(repo_folders):
    with HubServer() as server:
        for repo_id, folder in repo_folders.items():
            server.add_repo(repo_id, folder)
        yield server


@pytest.fixture(scope="module")
def catalog():
    return servekit.Catalog.load()


@pytest.fixture(scope="module")
def plan(catalog):
    return catalog.plan(MODEL, hardware="h200", **DFLASH)


def _servekit_lists(plan, settings: HubSettings) -> dict[str, set[str]]:
    """What ``servekit warm-cache --dry-run`` lists for the plan's launches, per repo."""
    targets = [EngineTarget("vllm", tuple(str(t) for t in p.argv())) for p in plan.processes]
    report = warm_cache(targets, settings, WarmOptions(dry_run=True)).to_dict()
    return {r["repo_id"]: {f["path"] for f in r["files"]} for r in report["repos"]}


def _warm_container(manifests: k8s.Manifests) -> dict:
    job = next(d for d in manifests.documents if d["kind"] == "Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def _run_in_pod(container: dict, pod_home, endpoint: str) -> subprocess.CompletedProcess:
    """The container's command with this interpreter as ``python3`` and the cache volume at ``pod_home``."""
    argv = [a.replace(HF_CACHE_PATH, str(pod_home)) for a in container["command"] + container["args"]]
    assert argv[0] == "python3"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update({e["name"]: e["value"].replace(HF_CACHE_PATH, str(pod_home)) for e in container["env"] if "value" in e})
    env["HF_ENDPOINT"] = endpoint
    return subprocess.run([sys.executable, *argv[1:]], env=env, capture_output=True, text=True, timeout=120)


def test_the_warm_job_names_exactly_the_files_servekit_lists(catalog, plan, hub, tmp_path):
    settings = HubSettings(endpoint=hub.endpoint, cache_dir=tmp_path / "planner-cache", offline=False)
    downloads = warm_downloads(plan, settings)
    listed = _servekit_lists(plan, settings)
    assert {d.repo_id: set(d.files) for d in downloads} == listed
    assert "pytorch_model.bin" not in listed[MODEL] and "model-00002-of-00002.safetensors" in listed[MODEL]
    assert all(d.revision == "main" and not d.allow_patterns and d.total_bytes for d in downloads)
    assert not settings.cache_dir.exists()  # planning reads the weight index into a scratch folder only
    manifests = k8s.build_manifests(plan, catalog.documents.taxonomy["hardware_profiles"]["h200"],
                                    downloads=downloads)
    assert not manifests.findings and k8s.problems(manifests.documents) == []
    container = _warm_container(manifests)
    assert container["image"] == plan.docker.image
    spec = YAML(typ="safe").load(container["args"][2])
    assert {repo["repo_id"]: set(repo["files"]) for repo in spec} == listed


def test_the_warm_jobs_command_downloads_those_files_and_marks_the_cache(catalog, plan, hub, tmp_path):
    settings = HubSettings(endpoint=hub.endpoint, cache_dir=tmp_path / "planner-cache", offline=False)
    downloads = warm_downloads(plan, settings)
    manifests = k8s.build_manifests(plan, catalog.documents.taxonomy["hardware_profiles"]["h200"],
                                    downloads=downloads)
    container = _warm_container(manifests)
    hub.requests.clear()
    done = _run_in_pod(container, tmp_path / "pod", hub.endpoint)
    assert done.returncode == 0, done.stderr
    pod_cache = HubSettings(endpoint=hub.endpoint, cache_dir=tmp_path / "pod" / "hub", offline=True)
    for download in downloads:
        assert sorted(hub.downloaded_files(download.repo_id)) == sorted(download.files)
        folder = storage_folder(pod_cache, download.repo_id)
        commit = (folder / "refs" / "main").read_text()  # a server started offline finds the snapshot
        snapshot = folder / "snapshots" / commit
        assert {p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()} == set(download.files)
    marker = container["args"][-1].replace(HF_CACHE_PATH, str(tmp_path / "pod"))
    assert open(marker, encoding="utf-8").read() == container["args"][2]
    wait = next(d for d in manifests.documents if d["kind"] == "Deployment")["spec"]["template"]["spec"][
        "initContainers"][0]
    assert container["args"][-1] in wait["args"][0]


def test_offline_the_job_downloads_by_pattern_and_says_so(catalog, plan, hub, tmp_path):
    downloads = warm_downloads(plan, HubSettings(endpoint=hub.endpoint, cache_dir=tmp_path / "c", offline=True))
    assert all(not d.files and "*.safetensors" in d.allow_patterns and d.ignore_patterns == ("*/*",)
               for d in downloads)
    manifests = k8s.build_manifests(plan, catalog.documents.taxonomy["hardware_profiles"]["h200"],
                                    downloads=downloads)
    assert any("downloads by pattern (HF_HUB_OFFLINE is set)" in note for note in manifests.notes)
    done = _run_in_pod(_warm_container(manifests), tmp_path / "pod", hub.endpoint)
    assert done.returncode == 0, done.stderr
    fetched = set(hub.downloaded_files(MODEL))
    assert "model-00001-of-00002.safetensors" in fetched and "config.json" in fetched
    assert not {f for f in fetched if "/" in f or f.endswith((".bin", ".gguf"))}  # root files of the chosen kinds


def test_plan_format_k8s_lists_the_files_from_the_hub(capsys, monkeypatch, hub):
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    code = main(["plan", MODEL, "--hardware", "h200", "--feature", "spec_decoding", "--mode", "spec_decoding=dflash",
                 "--format", "k8s"])
    out = capsys.readouterr()
    assert code == 0, out.err
    docs = [d for d in YAML(typ="safe").load_all(out.out) if d]
    job = next(d for d in docs if d["kind"] == "Job")["spec"]["template"]["spec"]["containers"][0]
    spec = YAML(typ="safe").load(job["args"][2])
    assert [repo["repo_id"] for repo in spec] == [MODEL, DRAFT]
    assert "model.safetensors.index.json" in spec[0]["files"] and "pytorch_model.bin" not in spec[0]["files"]
    assert "servekit==" not in out.out
