"""Install steps differ per platform family, each with the page it follows in the plan's provenance."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from servekit.app.plan import plan
from servekit.app.plan_text import plan_sh
from servekit.app.plan_view import plan_payload
from servekit.app.request import PlanRequest
from servekit.catalog.domain import ModelSection
from servekit.engines.vllm.catalog import CATALOGS as VLLM_CATALOGS
from servekit.hardware import build_profile
from servekit.synthesis.install import pinned_steps, platform_steps
from servekit.synthesis.install_families import FAMILIES, family_for

SEED = "Qwen/Qwen3.8-27B"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
ONE_PER_PLATFORM = {"h200": "cuda", "mi300x": "rocm", "xeon6": "cpu-x86_64", "trillium": "tpu",
                    "arc_pro_b60": "xpu", "ascend_950pr": "ascend"}
ARM_CPU = {"brand": "Ampere", "generation": "cpu", "display_name": "Ampere Altra", "gpu_count": 1, "vram_gb": 512}


def _payload(model: str, hardware: str, **kw) -> dict:
    return plan_payload(plan(PlanRequest(model, hardware=hardware, checks=False, **kw)))


def _pip(payload: dict) -> dict:
    return next(s for s in payload["servekit"]["install"] if s["kind"] == "pip")


def test_each_platform_family_installs_its_own_way_and_names_its_source():
    pips = {}
    for hardware, family in ONE_PER_PLATFORM.items():
        payload = _payload(LLAMA, hardware)
        step = _pip(payload)
        assert step["source"] == FAMILIES[family].source and step["source"].startswith("https://"), hardware
        provenance = payload["servekit"]["provenance"]["install"]["steps"]
        assert {"kind": "pip", "family": family, "source": step["source"]} in provenance or hardware == "ascend_950pr"
        pips[family] = step["command"]
    assert len(set(pips.values())) == len(pips), pips  # no two families share a pip step
    assert "--torch-backend auto" in pips["cuda"]
    assert "https://wheels.vllm.ai/rocm/" in pips["rocm"] and "--python 3.12" in pips["rocm"]
    assert "+cpu-cp38-abi3-manylinux_2_34_x86_64.whl" in pips["cpu-x86_64"] and "--torch-backend cpu" in pips["cpu-x86_64"]
    assert "vllm-tpu" in pips["tpu"]
    assert pips["xpu"].startswith("# ") and "vllm/vllm-openai-xpu" in pips["xpu"]  # no pip path: says so
    assert '"vllm-ascend==0.23.0"' in pips["ascend"] and '"vllm==0.23.0"' in pips["ascend"]


def test_an_arm_cpu_gets_the_arm_wheel_and_image():
    hw = build_profile("altra", ARM_CPU)
    assert hw.platform == "cpu" and hw.cpu_arch == "aarch64"
    steps = {s.kind: s for s in platform_steps(ModelSection.of({}), hw, "vllm/vllm-openai-cpu:latest-arm64")}
    assert "manylinux_2_35_aarch64.whl" in steps["pip"].command and steps["pip"].family == "cpu-aarch64"
    assert steps["pip"].source.endswith("cpu.arm.inc.md")
    assert family_for("cpu", "x86_64") is not family_for("cpu", "aarch64")


def test_pinned_versions_follow_the_family():
    hw = {h: build_profile(h, raw) for h, raw in (("mi300x", {"brand": "AMD", "generation": "amd", "gpu_count": 8,
                                                             "display_name": "MI300X", "vram_gb": 1536}),
                                                  ("xeon", {"brand": "Intel", "generation": "cpu", "gpu_count": 1,
                                                            "display_name": "Xeon", "vram_gb": 512}))}
    rocm = pinned_steps(platform_steps(ModelSection.of({}), hw["mi300x"], "vllm/vllm-openai-rocm:v0.20.0"), "0.20.0",
                        "vllm/vllm-openai-rocm:v0.20.0")
    pip = next(s for s in rocm if s.kind == "pip")
    assert '"vllm==0.20.0"' in pip.command and "https://wheels.vllm.ai/rocm/0.20.0/" in pip.command
    old = pinned_steps(platform_steps(ModelSection.of({}), hw["xeon"], "vllm/vllm-openai-cpu:v0.10.0-x86_64"),
                       "0.10.0", "vllm/vllm-openai-cpu:v0.10.0-x86_64")
    pip = next(s for s in old if s.kind == "pip")
    assert pip.command.startswith("# ") and "0.17.0" in pip.command  # the first x86 CPU wheel: no pip path before it
    assert next(s for s in old if s.kind == "docker").command == "docker pull vllm/vllm-openai-cpu:v0.10.0-x86_64"


def test_ascend_hardware_plans_for_vllm_ascend_and_checks_the_release_it_installs():
    result = plan(PlanRequest(SEED, hardware="ascend_950pr"))
    assert result.engine == "vllm-ascend"
    payload = plan_payload(result)
    commands = [s["command"] for s in payload["servekit"]["install"]]
    assert any('"vllm-ascend==0.23.0"' in c for c in commands)
    assert not any("--torch-backend auto" in c for c in commands)
    flags = payload["servekit"]["checks"]["flags"][0]
    # the check says which release runs; it is exact only where a catalog of that release is stored
    assert "0.23.0" in flags["runs"]
    assert flags["exact"] == ("0.23.0" in VLLM_CATALOGS.versions())


def test_ai100_hardware_plans_for_vllm_qaic():
    result = plan(PlanRequest(LLAMA, hardware="ai100_standard", checks=False))
    assert result.engine == "vllm-qaic"
    install = [s["command"] for s in plan_payload(result)["servekit"]["install"]]
    assert any("efficient-transformers" in c for c in install)


def test_sglang_on_rocm_renders_the_rocm_image_and_text():
    payload = _payload(SEED, "mi300x", engine="sglang")
    assert payload["docker_image"].endswith("-rocm700-mi30x")
    install = payload["servekit"]["install"]
    assert all("CUDA" not in (s.get("note") or "") + s["command"] for s in install), install
    assert any(s["kind"] == "docker" and s["command"] == f"docker pull {payload['docker_image']}" for s in install)
    assert _payload(SEED, "mi355x", engine="sglang")["docker_image"].endswith("-rocm700-mi35x")
    assert ":" in (cuda := _payload(SEED, "h200", engine="sglang")["docker_image"]) and "rocm" not in cuda


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
@pytest.mark.parametrize("hardware", sorted(ONE_PER_PLATFORM))
def test_each_family_install_script_passes_shellcheck(tmp_path: Path, hardware):
    """SC1091 (cannot follow ``. .venv/bin/activate``) is left out: the virtual environment the
    script sources exists only once its install step has run on the serving machine."""
    script = tmp_path / "plan.sh"
    script.write_text(plan_sh(plan(PlanRequest(LLAMA, hardware=hardware, checks=False))), encoding="utf-8")
    for check in (["sh", "-n", str(script)], ["shellcheck", "-s", "sh", "-e", "SC1091", str(script)]):
        done = subprocess.run(check, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (check[0], done.stdout + done.stderr)
