"""Files a command names are looked for where the command runs: here (``servekit lint``, ``up``),
inside its image (the container form), or nowhere servekit can see (a plan for another host)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servekit.engines.common.files import ELSEWHERE, HERE
from servekit.engines.registry import native_engine
from servekit.synthesis.image_files import ImagePlace
from servekit.synthesis.images import image_facts, in_image_path, in_image_words

TEMPLATE = "examples/tool_chat_template_gemma4.jinja"


def _codes(argv: list[str], files=HERE) -> dict[str, str]:
    result = native_engine().lint(["vllm", "serve", "m", *argv], None, files)
    return {f.code: f.severity for f in result.findings}


def test_here_a_missing_file_is_an_error_and_an_existing_one_passes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _codes(["--chat-template", TEMPLATE])["missing-chat-template"] == "error"
    (tmp_path / "examples").mkdir()
    (tmp_path / TEMPLATE).write_text("{{ messages }}", encoding="utf-8")
    assert "missing-chat-template" not in _codes(["--chat-template", TEMPLATE])
    assert _codes(["--config", "absent.yaml"])["missing-config-file"] == "error"


def test_inline_jinja_and_built_in_names_are_no_files():
    assert _codes(["--chat-template", "{{ messages }}"]) == {}
    assert _codes(["--chat-template", "template_chatml.jinja"]) == {}


def test_on_a_host_servekit_cannot_see_a_file_is_a_warning_saying_where_it_must_be():
    result = native_engine().lint(["vllm", "serve", "m", "--chat-template", TEMPLATE], None, ELSEWHERE)
    (finding,) = result.findings
    assert finding.severity == "warning" and finding.code == "file-not-checked"
    assert "on the machine that runs the server" in finding.message
    assert "not in a pip install" in (finding.fix or "")


def test_a_plugin_file_is_looked_for_where_the_server_runs_and_its_name_then_comes_from_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["--reasoning-parser-plugin", "my_parser.py", "--reasoning-parser", "my_parser"]
    assert _codes(argv) == {"plugin-name": "warning", "missing-plugin-file": "error"}
    (tmp_path / "my_parser.py").write_text("", encoding="utf-8")
    assert _codes(argv) == {"plugin-name": "warning"}
    assert _codes(argv, ELSEWHERE) == {"plugin-name": "warning", "file-not-checked": "warning"}
    assert _codes(["--reasoning-parser", "my_parser"]) == {"unknown-reasoning-parser": "error"}


def test_the_vllm_cuda_image_carries_vllms_examples_in_its_working_directory():
    place = ImagePlace("vllm/vllm-openai:v0.25.0", ELSEWHERE)
    assert place.has(TEMPLATE) is True
    assert place.has("/vllm-workspace/examples/x.jinja") is True
    assert place.has("my_template.jinja") is None  # not something the image is known to hold
    assert "missing-chat-template" not in _codes(["--chat-template", TEMPLATE], place)


def test_the_rocm_image_keeps_them_elsewhere_and_its_forms_name_them_there():
    """vllm/vllm-openai-rocm runs from /app and keeps vLLM's examples at /app/vllm/examples, so a
    recipe's ``examples/...`` is written there in the image's forms (``in_image_path``) and found."""
    assert in_image_path(image_facts("vllm/vllm-openai-rocm:latest"), TEMPLATE) == \
        "/app/vllm/examples/tool_chat_template_gemma4.jinja"
    assert in_image_path(image_facts("vllm/vllm-openai:latest"), TEMPLATE) == TEMPLATE  # found from its workdir
    assert in_image_path(image_facts("vllm/vllm-openai-xpu:latest"), TEMPLATE) == TEMPLATE  # the XPU image's too
    assert ImagePlace("vllm/vllm-openai-xpu:latest", ELSEWHERE).has(TEMPLATE) is True
    assert in_image_path(image_facts("vllm/vllm-openai-rocm:latest"), "my/examples/x.jinja") == "my/examples/x.jinja"
    assert in_image_path(None, TEMPLATE) == TEMPLATE  # an image servekit has no facts of: as written
    assert in_image_words("vllm/vllm-openai-rocm:latest", ["--chat-template", TEMPLATE, f"--x={TEMPLATE}", 8]) == (
        "--chat-template", "/app/vllm/examples/tool_chat_template_gemma4.jinja",
        "--x=/app/vllm/examples/tool_chat_template_gemma4.jinja", 8)
    place = ImagePlace("vllm/vllm-openai-rocm:latest", ELSEWHERE)
    assert place.has(TEMPLATE) is True
    assert native_engine().lint(["vllm", "serve", "m", "--chat-template", TEMPLATE], None, place).findings == ()


def test_a_bind_mount_is_the_hosts(tmp_path):
    host_file = tmp_path / "conf.yaml"
    host_file.write_text("{}", encoding="utf-8")
    place = ImagePlace("vllm/vllm-openai:latest", HERE, {"/cfg": str(tmp_path)})
    assert place.has("/cfg/conf.yaml") is True
    assert place.has("/cfg/other.yaml") is False
    assert ImagePlace("vllm/vllm-openai:latest", ELSEWHERE, {"/cfg": str(tmp_path)}).has("/cfg/conf.yaml") is None


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.25.0", "vllm/vllm-openai-rocm:nightly", "vllm/vllm-openai-xpu:latest"])
def test_each_image_family_names_its_source(image):
    facts = image_facts(image)
    assert facts is not None and "https://github.com/vllm-project/vllm/blob/main/docker/Dockerfile" in facts.source
    assert Path(facts.workdir or "").is_absolute() and Path(facts.examples or "").is_absolute()
