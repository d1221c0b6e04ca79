"""``servekit plan ... --format k8s`` through the real CLI entry point.

No Kubernetes cluster can run here; the printed documents are checked against the schemas and
servekit's own checks instead. The hub is switched off (HF_HUB_OFFLINE): the warm step then
downloads by pattern (test_k8s_warm.py lists exact files from a loopback hub).
"""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from servekit import k8s
from servekit.cli.app import main

pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra) is not installed")


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _wired(capsys) -> None:
    code, _, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--format", "k8s")
    if code != 0 and "unknown format" in err:
        pytest.skip("`servekit plan --format k8s` is not wired into servekit.cli.plan_cmd yet")


def test_plan_format_k8s_prints_valid_documents(capsys):
    _wired(capsys)
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--format", "k8s",
                         "--namespace", "llm", "--name", "qwen", "--storage-class", "fast", "--cache-size", "1Ti")
    assert code == 0, err
    docs = [d for d in YAML(typ="safe").load_all(out) if d]
    kinds = [d["kind"] for d in docs]
    assert {"Deployment", "Service", "PersistentVolumeClaim"} <= set(kinds)
    assert {d["metadata"]["namespace"] for d in docs} == {"llm"}
    claim = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "qwen-hf-cache"
    assert claim["spec"]["storageClassName"] == "fast"
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Ti"
    assert k8s.problems(docs) == []
    assert "# error:" not in out and "servekit==" not in out
    job = next(d for d in docs if d["kind"] == "Job")["spec"]["template"]["spec"]["containers"][0]
    assert job["command"] == ["python3"] and "from huggingface_hub import snapshot_download" in job["args"][1]
    assert "# note: warm-cache Qwen/Qwen3.8-27B: downloads by pattern (HF_HUB_OFFLINE is set)" in out


def test_plan_format_k8s_bad_name_is_a_clear_error(capsys):
    _wired(capsys)
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--format", "k8s",
                         "--name", "Not_A_Name")
    assert code != 0
    assert "Traceback" not in err and "--name" in err
