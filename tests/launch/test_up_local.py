"""``servekit up`` on hardware ``local`` plans for this machine (its CPU or its GPUs), never for a
catalog default device, and on a CPU it sets the KV-cache space to the pool it predicted."""

from __future__ import annotations

import json
import os
import stat

import pytest

from servekit.app.local_hardware import this_machine
from servekit.app.request import load_documents
from servekit.cli.app import main
from servekit.engines.registry import native_engine
from servekit.hardware import build_profile, measured_memory
from servekit.launch.local_model import LocalOptions, local_model_plan
from servekit.launch.machine import Gpu, LocalMachine, detect, parse_nvidia_smi, taxonomy_entry
from servekit.launch.prediction import pinned_kv_space, predict
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

QWEN = "Qwen/Qwen3.8-27B"
SPACE = native_engine().launch.kv_space_env
SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)
TOKENS_PER_GIB = 1024**3 // (2 * 2 * 2 * 64 * 2)  # layers x (K, V) x kv heads x head dim x bf16 bytes
cpu_only = pytest.mark.skipif(bool(detect().gpus), reason="this machine has GPUs; these tests are of a CPU machine")


def profiles() -> dict:
    return load_documents(None).taxonomy["hardware_profiles"]


@pytest.mark.parametrize(("name", "mib", "cap", "generation", "target"), [
    ("NVIDIA H100 80GB HBM3", 81559, "9.0", "hopper", "cuda:sm_90"),
    ("NVIDIA H200", 143771, "9.0", "hopper", "cuda:sm_90"),
    ("NVIDIA GeForce RTX 5090", 32607, "12.0", "blackwell", "cuda:sm_120"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887, "12.0", "blackwell", "cuda:sm_120"),
    ("Tesla T4", 15360, "7.5", None, "cuda:sm_75"),  # no taxonomy entry: what nvidia-smi reports
])
def test_gpus_are_described_by_their_models_entry_with_this_machines_count_and_memory(name, mib, cap, generation,
                                                                                      target):
    (gpu,) = parse_nvidia_smi(f"{name}, {mib}, {cap}\n", with_cap=True)
    machine = LocalMachine("cpu", 8, 16, 256.0, gpus=(gpu, gpu))
    entry = taxonomy_entry(machine, profiles())
    assert entry["kind"] == "gpu" and entry["platform"] == "cuda" and entry["gpu_count"] == 2
    assert entry.get("generation") == generation and entry["compute_target"] == target
    assert name in entry["display_name"]
    # what vLLM sees: the device table's figure for a model it has, else what nvidia-smi reports
    seen = measured_memory(name)
    expected = seen.memory_gib if seen else gpu.memory_gib
    assert build_profile("local", entry).memory_gib == pytest.approx(expected, abs=0.01)


def test_a_cpu_machine_is_one_node_with_the_memory_available_now():
    machine = LocalMachine("Some CPU", 2, 4, 64.0, available_gib=40.0, cpu_vendor="Intel")
    entry = taxonomy_entry(machine, profiles())
    assert entry["kind"] == entry["platform"] == "cpu" and entry["gpu_count"] == 1
    assert build_profile("local", entry).memory_gib == pytest.approx(40.0, abs=0.01)


def test_nvidia_smi_lines_with_and_without_the_compute_capability():
    assert parse_nvidia_smi("NVIDIA H200, 143771, 9.0\n", with_cap=True) == [Gpu("NVIDIA H200", 140.4, "9.0")]
    assert parse_nvidia_smi("NVIDIA H200, 143771\n") == [Gpu("NVIDIA H200", 140.4, None)]
    assert parse_nvidia_smi("NVIDIA H200, 143771, [N/A]\n", with_cap=True) == [Gpu("NVIDIA H200", 140.4, None)]


def test_the_memory_the_driver_reserves_is_not_the_engines():
    """nvidia-smi's total includes what the driver and firmware reserve; CUDA's total, which vLLM
    budgets from, does not: an H100 80GB HBM3's 81559 MiB less 454 MiB reserved is the 79.19 GiB
    vLLM logs. A driver without the field is answered without it, and nothing is subtracted."""
    line = "NVIDIA H100 80GB HBM3, 81559, 454, 9.0\n"
    (gpu,) = parse_nvidia_smi(line, with_cap=True, with_reserved=True)
    assert gpu == Gpu("NVIDIA H100 80GB HBM3", 79.2, "9.0")
    assert gpu.memory_gib == pytest.approx(measured_memory("NVIDIA H100 80GB HBM3").memory_gib, abs=0.02)
    assert parse_nvidia_smi("NVIDIA H200, 143771, [N/A], 9.0\n", True, True) == [Gpu("NVIDIA H200", 140.4, "9.0")]
    assert parse_nvidia_smi("Tesla T4, 15360, 255, 7.5\n", with_cap=True, with_reserved=True)[0].memory_gib == 14.75


def test_the_pinned_space_is_the_predicted_pool_in_whole_gib(tmp_path):
    model = write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")
    profile = LocalMachine("Some CPU", 2, 2, 32.0, available_gib=10.0).fit_profile()
    plan = local_model_plan(str(model), "vllm", LocalOptions(max_model_len=1024))
    unpinned = predict(plan, profile, "local")
    pinned = pinned_kv_space(plan, unpinned)
    assert pinned == {SPACE: str(int(unpinned.report.available_kv_gib))} and int(pinned[SPACE]) >= 1
    again = predict(local_model_plan(str(model), "vllm", LocalOptions(max_model_len=1024, env=pinned)), profile, "local")
    assert again.report.kv_tokens == int(pinned[SPACE]) * TOKENS_PER_GIB


@pytest.mark.parametrize("options", [
    LocalOptions(env={SPACE: "2"}),
    LocalOptions(extra_args=("--kv-cache-memory-bytes", "1073741824")),
])
def test_a_space_the_command_sets_is_kept(tmp_path, options):
    model = write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")
    plan = local_model_plan(str(model), "vllm", options)
    profile = LocalMachine("Some CPU", 2, 2, 32.0, available_gib=10.0).fit_profile()
    assert pinned_kv_space(plan, predict(plan, profile, "local")) == {}


@cpu_only
def test_a_local_model_on_this_cpu_gets_the_predicted_space(tmp_path, capsys):
    model = write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")
    assert main(["up", str(model), "--dry-run", "--format", "json", "--max-model-len", "1024"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert int(doc["plan"]["processes"][0]["env"][SPACE]) >= 1
    assert main(["up", str(model), "--dry-run", "--format", "json", "--env", f"{SPACE}=2"]) == 0
    assert json.loads(capsys.readouterr().out)["plan"]["processes"][0]["env"][SPACE] == "2"


@cpu_only
def test_a_recipe_here_is_planned_for_this_cpu_not_a_catalog_device(capsys):
    code = main(["up", QWEN, "--docker", "--dry-run"])
    out = capsys.readouterr().out
    assert f"recipe {QWEN} (default, single_node_tp) for local" in out
    assert "; local is this machine (" in out
    assert "h200" not in out.lower() and "--gpus" not in out
    assert "vllm/vllm-openai-cpu:" in out  # the CPU image
    # 27B parameters in bf16 do not fit this machine's memory: refused, for this machine's reason
    assert code == 1 and "refused: fit: fit-weights" in out


def _stand_in_nvidia_smi(folder, line: str):
    folder.mkdir()
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\necho '{line}'\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return folder


@pytest.fixture
def fresh_machine():
    """``this_machine`` is detected once per process: detected anew here, and forgotten after, so
    the stand-in GPU does not outlive the test (a later test in the process would see a GPU)."""
    this_machine.cache_clear()
    yield
    this_machine.cache_clear()


def test_a_recipe_on_a_gpu_machine_is_planned_for_its_gpus(tmp_path, capsys, monkeypatch, fresh_machine):
    """A stand-in ``nvidia-smi`` (no GPU exists on the machines the fast tests run on) reports
    one H200; the plan is for that GPU, in the GPU docker form, and fits its memory."""
    bin_dir = _stand_in_nvidia_smi(tmp_path / "bin", "NVIDIA H200, 143771, 9.0")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert main(["up", QWEN, "--docker", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "; local is this machine (1 x NVIDIA H200)" in out
    assert "docker run --gpus all" in out and "refused" not in out
    assert SPACE not in out
