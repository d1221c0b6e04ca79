"""``servekit plan RECIPE --hardware local`` plans a catalog recipe for this machine (its CPU, or
its GPUs), as ``up`` does and as a plan of a model without a recipe does: the selection, the
layout choice, the image and the fit checks all use this machine's entry."""

from __future__ import annotations

import json
import os
import stat

import pytest

from servekit.app.local_hardware import this_machine
from servekit.app.request import load_documents
from servekit.cli.app import main
from servekit.hardware import build_profile

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture
def fresh_machine():
    """``this_machine`` is detected once per process; each test here detects it anew."""
    this_machine.cache_clear()
    yield
    this_machine.cache_clear()


def _plan(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["plan", *args, "--hardware", "local", "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_a_recipe_is_planned_for_this_cpu(capsys, fresh_machine):
    if this_machine().gpus:
        pytest.skip("this machine has GPUs; this test is of a machine without them")
    code, doc, err = _plan(capsys, LLAMA, "--strategy", "single_node_tp")
    assert doc["hardware"] == "local" and "Traceback" not in err
    assert doc["servekit"]["notes"][0].startswith("hardware: local (this machine: ")
    assert "-cpu:" in doc["docker_image"] and "--gpus" not in doc["docker_argv"]
    (fit,) = doc["servekit"]["checks"]["fit"]
    entry = this_machine().fit_profile(load_documents(None).taxonomy["hardware_profiles"])
    assert fit["report"]["device"] == "local" and fit["report"]["engine"] == "vllm-cpu"
    assert fit["report"]["device_memory_gib"] == pytest.approx(build_profile("local", entry).memory_gib, abs=0.01)
    assert code == (0 if fit["ok"] else 1)


def test_a_recipe_on_a_gpu_machine_is_planned_for_its_gpus(tmp_path, capsys, monkeypatch, fresh_machine):
    """A stand-in ``nvidia-smi`` (no GPU exists on the machines the fast tests run on) reports
    two H100s: the plan is for them (CUDA image, GPU docker form), and the 8B model fits one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559, 9.0'\necho 'NVIDIA H100 80GB HBM3, 81559, 9.0'\n",
                      encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    code, doc, err = _plan(capsys, LLAMA)
    assert code == 0, err
    assert doc["hardware"] == "local" and doc["node_count"] == 1
    assert doc["servekit"]["notes"][0] == "hardware: local (this machine: 2 x NVIDIA H100 80GB HBM3)"
    assert doc["docker_image"].startswith("vllm/vllm-openai:") and "--gpus" in doc["docker_argv"]
    (fit,) = doc["servekit"]["checks"]["fit"]
    assert fit["ok"] and fit["report"]["device"] == "local" and fit["report"]["tp"] == 1


def test_an_unknown_hardware_name_lists_local_among_the_choices(capsys):
    assert main(["plan", LLAMA, "--hardware", "nowhere"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unknown hardware 'nowhere'; valid choices: local, h100, ") and "Traceback" not in err
