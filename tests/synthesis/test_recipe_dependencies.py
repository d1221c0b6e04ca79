"""A recipe's extra install steps apply where it says (``brand``, ``install_modes``, ``optional``),
its ``docker_source`` checkout reaches the container, vLLM-Omni's own images run where they are
built for, and a plan that installs an older vLLM than the recipe's minimum is refused.

The recipe below is this file's own: an omni model with steps for each brand and each install
form, as the recipes site reads them (``brand`` one name or a list; ``install_modes`` absent
meaning the pip form only; ``optional`` run by choice).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from servekit.catalog.documents import bundled_catalog_dir
from servekit.cli.app import main
from servekit.synthesis.shell import split_command
from synthesis.test_plan_script import SHELLCHECK, shellcheck_findings

RECIPE = """\
meta:
  title: "Omni Demo"
  provider: "Acme"
  description: "A vLLM-Omni recipe of this test"
  tasks:
    - omni
  hardware:
    h200: verified
    mi300x: verified
    ascend_950pr: verified

model:
  model_id: "Acme/Omni-Demo"
  min_vllm_version: "0.26.0"
  docker_image:
    nvidia: "vllm/vllm-omni:demo"
    amd: "vllm/vllm-omni-rocm:demo"
  docker_source:
    mount_path: "/srv/vllm-omni"
  architecture: dense
  parameter_count: "8B"
  context_length: 0
  base_args: ["--trust-remote-code"]
  base_env: {}

omni:
  tasks:
    - t2v

dependencies:
  - note: "host prerequisite for both forms"
    command: "hf download Acme/Omni-Demo --local-dir /srv/omni-demo"
    install_modes: [pip, docker]
  - note: "NVIDIA pip step"
    command: "uv pip install nvidia-only-package"
    brand: NVIDIA
  - note: "ROCm or Ascend pip step"
    command: "uv pip install not-on-cuda-package"
    brand: [AMD, Huawei]
  - note: "Ascend build of vLLM at the release the recipe needs"
    command: |
      git clone --depth 1 --branch v0.26.0 https://github.com/vllm-project/vllm.git
      cd vllm && VLLM_TARGET_DEVICE=empty pip install -e . && cd ..
    brand: Huawei
  - note: "docker form only"
    command: "git clone --depth 1 https://github.com/vllm-project/vllm-omni.git /srv/vllm-omni"
    install_modes: [docker]
  - note: "optional extra"
    command: "uv pip install optional-extra"
    optional: true

features: {}

variants:
  default:
    precision: bf16
    vram_minimum_gb: 40
    hardware_overrides:
      ascend_950pr:
        docker_image: "quay.io/ascend/vllm-omni:demo"
"""


@pytest.fixture
def catalog(tmp_path) -> Path:
    root = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), root)
    (root / "models" / "Acme").mkdir()
    (root / "models" / "Acme" / "Omni-Demo.yaml").write_text(RECIPE, encoding="utf-8")
    return root


@pytest.fixture
def run(capsys):
    def invoke(*args: str) -> tuple[int, str]:
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out + captured.err
    return invoke


@pytest.fixture
def plan(run, catalog):
    return lambda *args: run("plan", "Acme/Omni-Demo", "--catalog", str(catalog), *args)


def _steps(plan, hardware: str) -> list[dict]:
    code, out = plan("--hardware", hardware, "--format", "json")
    assert code == 0, out
    return [s for s in json.loads(out)["servekit"]["install"] if s["kind"] == "extra"]


def test_the_catalog_check_takes_a_list_of_brands(run, catalog):
    code, out = run("catalog", "validate", str(catalog))
    assert code == 0, out
    recipe = catalog / "models" / "Acme" / "Omni-Demo.yaml"
    recipe.write_text(RECIPE.replace("brand: [AMD, Huawei]", "brand: [AMD, Huwaei]"), encoding="utf-8")
    code, out = run("catalog", "validate", str(catalog))
    assert code == 1
    assert "Omni-Demo.yaml:39:18: dependencies[2].brand[1]:" in out and "unknown brand 'Huwaei'" in out


def test_steps_of_other_brands_are_left_out(plan):
    nvidia = [s["command"] for s in _steps(plan, "h200")]
    amd = [s["command"] for s in _steps(plan, "mi300x")]
    ascend = [s["command"] for s in _steps(plan, "ascend_950pr")]
    assert "uv pip install nvidia-only-package" in nvidia and "uv pip install not-on-cuda-package" not in nvidia
    assert "uv pip install not-on-cuda-package" in amd and "uv pip install nvidia-only-package" not in amd
    assert "uv pip install not-on-cuda-package" in ascend and not any("nvidia-only" in c for c in ascend)
    assert any("vllm-project/vllm.git" in c for c in ascend) and not any("vllm-project/vllm.git" in c for c in amd)
    everywhere = "hf download Acme/Omni-Demo --local-dir /srv/omni-demo"
    assert all(everywhere in steps for steps in (nvidia, amd, ascend))


def test_each_step_names_its_forms_and_runs_only_in_them(plan):
    steps = {s["note"]: s for s in _steps(plan, "mi300x")}
    assert steps["host prerequisite for both forms"]["forms"] == ["pip", "docker"]
    assert steps["ROCm or Ascend pip step"]["forms"] == ["pip"]  # no install_modes: the pip form only
    assert steps["docker form only"]["forms"] == ["docker"]
    assert steps["optional extra"]["optional"] is True and "optional" not in steps["docker form only"]
    code, native = plan("--hardware", "mi300x", "--format", "sh")
    assert code == 0, native
    code, docker = plan("--hardware", "mi300x", "--format", "sh", "--docker")
    assert code == 0, docker
    runs = {form: [line for line in text.splitlines() if not line.startswith("#")]
            for form, text in (("native", native), ("docker", docker))}
    assert "hf download Acme/Omni-Demo --local-dir /srv/omni-demo" in runs["native"]
    assert "hf download Acme/Omni-Demo --local-dir /srv/omni-demo" in runs["docker"]
    assert "uv pip install not-on-cuda-package" in runs["native"]
    assert "uv pip install not-on-cuda-package" not in runs["docker"]
    clone = "git clone --depth 1 https://github.com/vllm-project/vllm-omni.git /srv/vllm-omni"
    assert clone in runs["docker"] and clone not in runs["native"]
    for form in runs.values():  # an optional step is shown, never run
        assert "uv pip install optional-extra" not in form
    code, text = plan("--hardware", "mi300x")
    assert code == 0, text
    assert f"# install [extra] (the docker form: plan --docker)\n# {clone}\n" in text
    assert "# install [extra] (optional: run it by choice)\n# uv pip install optional-extra\n" in text
    code, text = plan("--hardware", "mi300x", "--docker")
    assert code == 0, text
    assert "# install [extra] (the form without --docker)\n# uv pip install not-on-cuda-package\n" in text


def test_the_builder_page_tabs_follow_the_step_forms(plan):
    from servekit.web.plan_sections import _install

    code, out = plan("--hardware", "mi300x", "--format", "json")
    assert code == 0, out
    native, container = _install(json.loads(out)["servekit"])
    assert native.key == "install-native" and container.key == "install-docker"
    native_commands = [b.text for b in native.blocks]
    container_commands = [b.text for b in container.blocks]
    assert "uv pip install not-on-cuda-package" in native_commands
    assert "uv pip install not-on-cuda-package" not in container_commands
    assert "git clone --depth 1 https://github.com/vllm-project/vllm-omni.git /srv/vllm-omni" in container_commands
    assert any(b.title == "extra (optional)" for b in native.blocks)


def test_the_docker_form_mounts_the_source_checkout_first_on_pythonpath(plan):
    code, out = plan("--hardware", "mi300x", "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    argv = doc["docker_argv"]
    assert split_command(doc["docker_command"]) == argv
    assert "/srv/vllm-omni:/srv/vllm-omni:ro" in argv and "PYTHONPATH=/srv/vllm-omni" in argv
    image = argv.index("vllm/vllm-omni-rocm:demo")
    # vLLM-Omni's ROCm image has no entrypoint (its Dockerfile.rocm): the whole command follows it
    assert "--entrypoint" not in argv and argv[image + 1:image + 3] == ["vllm", "serve"]
    code, text = plan("--hardware", "mi300x", "--docker")
    assert "# /srv/vllm-omni must already exist on the host" in text


def test_kubernetes_says_the_pods_need_the_source_checkout(plan):
    code, out = plan("--hardware", "mi300x", "--format", "k8s")
    assert code == 0, out
    assert "# note: the recipe runs a source checkout at /srv/vllm-omni ahead of the image's own packages" in out
    assert "mount a volume holding it at /srv/vllm-omni and set PYTHONPATH=/srv/vllm-omni" in out


def test_vllm_omni_runs_from_its_ascend_image(plan):
    code, out = plan("--hardware", "ascend_950pr", "--docker")
    assert code == 0, out
    assert "quay.io/ascend/vllm-omni:demo" in out and "cannot run ascend" not in out
    assert "quay.io/ascend/vllm-ascend" not in out


def test_an_omni_launch_in_an_image_without_vllm_omni_is_refused(plan, catalog):
    recipe = catalog / "models" / "Acme" / "Omni-Demo.yaml"
    recipe.write_text(RECIPE.replace('    nvidia: "vllm/vllm-omni:demo"\n', "")
                      .replace('        docker_image: "quay.io/ascend/vllm-omni:demo"\n', '        extra_env: {}\n'),
                      encoding="utf-8")
    for hardware, image, omni in (("h200", "vllm/vllm-openai:latest", "vllm/vllm-omni"),
                                  ("ascend_950pr", "quay.io/ascend/vllm-ascend:v", "quay.io/ascend/vllm-omni")):
        code, out = plan("--hardware", hardware, "--docker")
        assert code == 1, out
        assert f"error image-without-omni: {image}" in out and f"pass --image with a vLLM-Omni image ({omni}," in out
        code, out = plan("--hardware", hardware)  # the form without --docker is not judged by an image
        assert "image-without-omni" not in out
    code, out = plan("--hardware", "h200", "--format", "k8s")  # pods run the image too: the finding is shown
    assert code == 1 and "deploy (container): error image-without-omni: vllm/vllm-openai:latest" in out
    code, out = plan("--hardware", "mi300x", "--docker")  # the recipe's vLLM-Omni ROCm image
    assert code == 0, out


def test_an_install_older_than_the_minimum_is_refused_with_its_fix(plan):
    code, out = plan("--hardware", "h200", "--vllm-version", "0.20.0")
    assert code == 1
    assert "error release-below-minimum: this plan runs vLLM 0.20.0" in out
    assert "older than vLLM 0.26.0, the minimum that model.min_vllm_version names" in out
    assert "(fix: pass --vllm-version 0.26.0 (or a newer release))" in out
    code, out = plan("--hardware", "h200", "--vllm-version", "0.26.0")
    assert code == 0, out


def test_an_unpinned_install_is_not_judged_by_the_release_servekit_pins(plan, catalog):
    # a minimum newer than any release servekit knows: an unpinned install or a latest image may
    # well run it, so only a pin below it is refused
    recipe = catalog / "models" / "Acme" / "Omni-Demo.yaml"
    recipe.write_text(RECIPE.replace('min_vllm_version: "0.26.0"', 'min_vllm_version: "0.99.0"')
                      .replace('    nvidia: "vllm/vllm-omni:demo"\n', '    nvidia: "vllm/vllm-openai:latest"\n'),
                      encoding="utf-8")
    for extra in ((), ("--docker",)):
        code, out = plan("--hardware", "h200", *extra)
        assert "release-below-minimum" not in out, out
    code, out = plan("--hardware", "h200", "--vllm-version", "0.32.0")
    assert code == 1 and "error release-below-minimum: this plan runs vLLM 0.32.0" in out


def test_a_later_step_that_builds_vllm_decides_what_runs(plan, catalog):
    # vllm-ascend's pinned release installs vLLM 0.23.0, but the recipe's Ascend step builds
    # vLLM 0.26.0 after it: what runs meets the minimum
    code, out = plan("--hardware", "ascend_950pr")
    assert code == 0, out
    assert 'vllm-ascend==0.23.0' in out and "release-below-minimum" not in out
    recipe = catalog / "models" / "Acme" / "Omni-Demo.yaml"
    recipe.write_text(RECIPE.replace("--branch v0.26.0", "--branch v0.25.0"), encoding="utf-8")
    code, out = plan("--hardware", "ascend_950pr")
    assert code == 1 and "this plan runs vLLM 0.25.0 (dependencies[3] puts it in place after the pip step)" in out


def test_scripts_parse_and_pass_shellcheck(plan, tmp_path):
    scripts = {}
    for hardware in ("h200", "mi300x", "ascend_950pr"):
        for extra in ((), ("--docker",)):
            code, script = plan("--hardware", hardware, "--format", "sh", *extra)
            assert code == 0, script
            path = tmp_path / "plan.sh"
            path.write_text(script, encoding="utf-8")
            assert subprocess.run(["sh", "-n", str(path)], capture_output=True).returncode == 0
            scripts[f"{hardware}{''.join(extra)}"] = script
    if SHELLCHECK is None:
        pytest.skip("shellcheck is not installed (scripts/install_system_tools.sh)")
    assert shellcheck_findings(scripts, tmp_path) == []
