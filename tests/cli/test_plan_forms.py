"""``servekit plan``: overrides, the docker form, the sh form and each engine's install steps."""

from __future__ import annotations

import json

from servekit.cli.app import main

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_overrides_replace_the_recipe_values_with_provenance(capsys):
    code, out, err = run(capsys, "plan", LLAMA, "--format", "json", "--tp", "2", "--max-model-len", "8192",
                         "--port", "9000", "--gpu-memory-utilization", "0.8", "--vllm-version", "0.11.0")
    assert code == 0, err
    doc = json.loads(out)
    argv = doc["argv"]
    for flag, value in (("--tensor-parallel-size", "2"), ("--max-model-len", "8192"), ("--port", "9000"),
                        ("--gpu-memory-utilization", "0.8")):
        assert argv[argv.index(flag) + 1] == value and argv.count(flag) == 1
    sources = {tuple(p["arg"])[0]: p["source"] for p in doc["servekit"]["provenance"]["serve"]["args"]}
    assert sources["--tensor-parallel-size"] == "override: --tp"
    assert doc["docker_image"] == "vllm/vllm-openai:v0.11.0"
    assert any('uv pip install "vllm==0.11.0"' in s["command"] for s in doc["servekit"]["install"])
    assert doc["servekit"]["checks"]["fit"][0]["role"] == "serve"  # the overrides went through the checks


def test_an_override_that_cannot_be_is_one_error(capsys):
    for args, expected in ((["--tp", "0"], "--tp must be 1 or more"),
                           (["--gpu-memory-utilization", "1.5"], "at most 1"),
                           (["--max-model-len", "lots"], "token count")):
        code, out, err = run(capsys, "plan", LLAMA, *args)
        assert code == 1 and expected in err, err


def test_image_override_and_the_docker_form(capsys):
    code, out, err = run(capsys, "plan", LLAMA, "--docker", "--image", "example.org/vllm:1")
    assert code == 0, err
    assert "\ndocker pull example.org/vllm:1\n" in out
    # an image servekit has no facts about gets the serve program as its entrypoint
    assert "--entrypoint vllm \\\n  example.org/vllm:1 serve meta-llama/Llama-3.1-8B-Instruct" in out
    assert "\nuv pip install" not in out  # the pip form is shown as comments only
    assert "<- override: --image" not in out


def test_sh_form_is_one_posix_script(capsys):
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--hardware", "b200", "--kv-offload", "lmcache",
                         "--format", "sh")
    assert code == 0, err
    assert out.startswith("#!/bin/sh\n") and "\nset -eu\n" in out
    assert "lmcache server" in out and "--supported-transfer-mode lmcache_driven &\nvllm serve" in out


def test_other_engines_show_their_own_install_steps(capsys):
    code, out, err = run(capsys, "plan", "google/gemma-3-12b-it", "--engine", "max", "--hardware", "h100")
    assert code == 0, err
    assert "uv pip install -U vllm" not in out and "min vLLM version" not in out
    assert 'uv pip install "modular==' in out
    code, out, err = run(capsys, "plan", LLAMA, "--engine", "vllm-qaic", "--hardware", "ai100_standard",
                         "--vllm-version", "1.2.3")
    assert code == 0, err
    assert "min vLLM version" not in out and "docker pull ghcr.io/quic/cloud_ai_inference_vllm:1.2.3" in out
