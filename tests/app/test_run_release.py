"""The release each form of a plan runs, read from the plan's install steps and image tag."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit import Catalog
from servekit.app.run_release import image_release, native_release, pinned_by_install, split_image
from servekit.synthesis.plan import InstallStep

DEFAULT = "0.32.0"


@pytest.mark.parametrize(("image", "version", "words"), [
    ("vllm/vllm-openai:v0.25.0", "0.25.0", "the tag of vllm/vllm-openai:v0.25.0"),
    ("vllm/vllm-openai:v0.33", "0.33.0", "the tag"),
    ("vllm/vllm-openai-rocm:v0.20.1-rocm7", "0.20.1", "the tag"),
    ("quay.io/ascend/vllm-ascend:v0.23.0", "0.23.0", "the tag"),
    ("vllm/vllm-openai:latest", DEFAULT, "newest release servekit pins"),
    ("vllm/vllm-openai", DEFAULT, "newest release servekit pins"),
    ("vllm/vllm-openai:nightly", None, "nightly"),
    ("eugr/spark-vllm-b12x:latest", None, "no stored catalog describes"),
    ("vllm/vllm-omni:cosmos3", None, "no stored catalog describes"),
    ("registry.example:5000/team/vllm-custom:v0.30.1@sha256:abc", "0.30.1", "the tag"),
])
def test_the_container_form_runs_what_its_image_tag_says(image, version, words):
    release = image_release(image, default=DEFAULT)
    assert release.version == version
    assert words in release.what
    assert release.settles  # always names the catalog that would decide


def test_image_names_split_at_the_tag_not_the_registry_port():
    assert split_image("registry.example:5000/team/img") == ("registry.example:5000/team/img", "")
    assert split_image("registry.example:5000/team/img:v1") == ("registry.example:5000/team/img", "v1")


@pytest.fixture(scope="module")
def llama_plan():
    catalog = Catalog.load()
    return catalog.plan("meta-llama/Llama-3.1-8B-Instruct", hardware="h100")


def test_an_unpinned_install_runs_the_pinned_catalogs_release(llama_plan):
    assert pinned_by_install(llama_plan) is None
    release = native_release(llama_plan, nightly=False, default=DEFAULT)
    assert release.version == DEFAULT and "unpinned" in release.what


def test_a_pinned_install_step_names_its_release(llama_plan):
    pinned = replace(llama_plan, install=(InstallStep("pip", 'uv pip install "vllm==0.25" --torch-backend auto'),))
    assert native_release(pinned, nightly=False, default=DEFAULT).version == "0.25.0"
    other = replace(llama_plan, install=(InstallStep("pip", "uv pip install vllm-omni==0.9.0"),))
    assert pinned_by_install(other) is None  # another distribution's pin is not vLLM's


def test_a_nightly_recipe_or_a_newer_minimum_is_beyond_every_stored_catalog(llama_plan):
    nightly = native_release(llama_plan, nightly=True, default=DEFAULT)
    assert nightly.version is None and "nightly" in nightly.what
    newer = native_release(replace(llama_plan, min_version="0.40"), nightly=False, default=DEFAULT)
    assert newer.version == "0.40.0" and "min_vllm_version" in newer.what
    older = native_release(replace(llama_plan, min_version="0.6.0"), nightly=False, default=DEFAULT)
    assert older.version == DEFAULT
    asked = native_release(llama_plan, nightly=True, default=DEFAULT, pinned="v0.33")
    assert asked.version == "0.33.0"  # the release the person or the engine names wins
