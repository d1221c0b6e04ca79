"""The install one-liners published under ``model.install``."""

from __future__ import annotations

import shlex

from servekit.api.install import DEFAULT_IMAGE, nvidia_image, synthesize_install
from servekit.synthesis.install import PIP_DEFAULT as STABLE_PIP


def _recipe(**model):
    return {"model": model}


def test_stable_defaults_pull_the_recipe_image():
    out = synthesize_install(_recipe(docker_image="vllm/vllm-openai:v1"))
    assert out == {"pip": {"command": STABLE_PIP}, "docker": {"command": "docker pull vllm/vllm-openai:v1"}}


def test_nightly_recipe_gets_nightly_wheels_and_a_note():
    out = synthesize_install(_recipe(nightly_required=True, min_vllm_version="0.30.0"))
    assert "--pre" in out["pip"]["command"]
    assert "https://wheels.vllm.ai/nightly/cu130" in out["pip"]["command"]
    assert out["pip"]["note"] == "vLLM 0.30.0 isn't released yet \u2014 nightly required."
    # every line of the snippet is a valid shell command
    for line in out["pip"]["command"].replace("\\\n", " ").splitlines():
        assert shlex.split(line)


def test_overrides_apply_field_by_field_and_false_drops_an_entry():
    recipe = _recipe(install={"pip": {"note": "since v0.25"}, "docker": False})
    assert synthesize_install(recipe) == {"pip": {"command": STABLE_PIP, "note": "since v0.25"}}
    recipe = _recipe(install={"pip": False, "docker": {"command": "docker pull x/y:z", "note": "n"}})
    assert synthesize_install(recipe) == {"docker": {"command": "docker pull x/y:z", "note": "n"}}


def test_everything_off_means_no_install_and_extras_are_verbatim():
    assert synthesize_install(_recipe(install={"pip": False, "docker": False})) is None
    deps = [{"command": "uv pip install foo==1", "note": "for bar"}]
    out = synthesize_install({"model": {"install": {"pip": False, "docker": False}}, "dependencies": deps})
    assert out == {"extras": deps}


def test_nvidia_image_from_brand_and_cuda_maps():
    assert nvidia_image(_recipe()) == DEFAULT_IMAGE
    assert nvidia_image(_recipe(docker_image={"amd": "rocm:x"})) == DEFAULT_IMAGE
    assert nvidia_image(_recipe(docker_image={"nvidia": "nv:x", "amd": "rocm:x"})) == "nv:x"
    assert nvidia_image(_recipe(docker_image={"nvidia": {"cu129": "a", "cu130": "b"}})) == "b"
    assert nvidia_image(_recipe(docker_image={"cu129": "a"})) == "a"
    assert nvidia_image(_recipe(docker_image={"cu129": "a"}), cuda="cu129") == "a"
