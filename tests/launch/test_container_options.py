"""What ``up --docker`` sets on the plan's container form (``--image``, ``--volume``, ``--pull``,
``--host``), as ``--dry-run`` prints it; and the container form of a local model directory."""

from __future__ import annotations

import json
import shlex

import pytest

from servekit.cli.app import main
from servekit.errors import ServekitError
from servekit.launch.docker_run import ContainerOptions, checked_volume, container_command, endpoint, run_words
from testing.tiny_model import write_tiny_llama

COMMAND = ("docker run --shm-size 16g -p 8123:8123 -v ~/.cache/huggingface:/root/.cache/huggingface "
           "-e 'A=b c' img /models/m --port 8123")


def test_options_go_before_the_image_and_the_rest_is_unchanged():
    options = ContainerOptions(volumes=("/opt/env:/opt/env:ro", "~/data:/data"), pull="never", host="127.0.0.1")
    words = shlex.split(container_command(COMMAND, options))
    assert words[:10] == ["docker", "run", "--pull", "never", "-v", "/opt/env:/opt/env:ro", "-v", "~/data:/data",
                          "--shm-size", "16g"]
    original = shlex.split(COMMAND)
    assert words[10:] == [original[4], "127.0.0.1:8123:8123", *original[6:]]
    assert endpoint(words) == "http://127.0.0.1:8123"


def test_without_options_the_command_is_the_plan_s():
    assert shlex.split(container_command(COMMAND, ContainerOptions())) == shlex.split(COMMAND)


def test_a_published_port_that_names_its_address_keeps_it():
    command = "docker run -p 10.0.0.5:9000:8000 img m"
    words = shlex.split(container_command(command, ContainerOptions(host="127.0.0.1")))
    assert words[3] == "10.0.0.5:9000:8000"
    assert endpoint(words) == "http://10.0.0.5:9000"
    assert shlex.split(container_command("docker run -p 9000:8000 img m", ContainerOptions(host="::1")))[3] == \
        "[::1]:9000:8000"


def test_every_address_is_reached_on_this_machine_at_127_0_0_1():
    assert endpoint(["docker", "run", "-p", "0.0.0.0:9000:8000", "img"]) == "http://127.0.0.1:9000"
    assert endpoint(["docker", "run", "--network", "host", "img", "m", "--port", "9001"]) == "http://127.0.0.1:9001"


@pytest.mark.parametrize("value, says", [
    ("/a", "is not SRC:DST"), ("/a:/b:/c:/d", "is not SRC:DST"), ("a:/b", "absolute"), ("/a:b", "absolute"),
    ("/a:/b:rx", "mode must be one of ro, rw"),
])
def test_a_volume_that_is_not_src_dst_mode_is_refused(value, says):
    with pytest.raises(ServekitError, match=says):
        checked_volume(value)


def test_a_pull_policy_docker_does_not_know_is_refused():
    with pytest.raises(ServekitError, match="--pull 'sometimes' is not one of missing, always, never"):
        container_command(COMMAND, ContainerOptions(pull="sometimes"))


def test_the_cpu_form_asks_for_no_privileges(tmp_path, capsys):
    """The CPU form carries vLLM's options for its CPU image and nothing a host may withhold
    (``servekit.differences``: cpu-container-options)."""
    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["plan", str(model), "--hardware", "xeon6", "--format", "json"]) == 0
    words = [str(w) for w in json.loads(capsys.readouterr().out)["docker_argv"]]
    options = words[:words.index("vllm/vllm-openai-cpu:latest-x86_64")]
    assert "--privileged" not in options and "--ipc=host" not in options
    assert " ".join(options).count("--security-opt seccomp=unconfined --cap-add SYS_NICE") == 1


def test_up_runs_the_container_under_docker_s_init():
    words = run_words("docker", COMMAND, "RUN", "serve")
    assert words[2:4] == ["--detach", "--init"]


def test_a_local_model_directory_has_the_container_form_of_its_plan(tmp_path, capsys):
    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["plan", str(model), "--hardware", "xeon6", "--port", "8123", "--format", "json"]) == 0
    planned = [str(w) for w in json.loads(capsys.readouterr().out)["docker_argv"]]
    code = main(["up", str(model), "--hardware", "xeon6", "--docker", "--dry-run", "--port", "8123",
                 "--kv-cache-space", "1", "--image", "example.org/vllm-cpu:1", "--pull", "never",
                 "--volume", f"{tmp_path}:/extra:ro"])
    out, err = capsys.readouterr()
    assert code == 0, err
    words = shlex.split(out.splitlines()[1])
    assert words[:6] == ["docker", "run", "--pull", "never", "-v", f"{tmp_path}:/extra:ro"]
    assert f"{model}:{model}:ro" in words and "127.0.0.1:8123:8123" in words
    assert "VLLM_CPU_KVCACHE_SPACE=1" in words  # --env and --kv-cache-space reach the container
    image = words.index("example.org/vllm-cpu:1")
    # an image servekit has no facts about is given the serve program as its entrypoint
    assert words[image - 2:image] == ["--entrypoint", "vllm"]
    assert words[image + 1:] == ["serve", *planned[planned.index("vllm/vllm-openai-cpu:latest-x86_64") + 1:]]


def test_on_this_machine_a_model_directory_s_container_form_is_this_machine_s(tmp_path, capsys):
    from servekit.launch.machine import detect

    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["plan", str(model), "--hardware", "local", "--format", "json"]) == 0
    planned = json.loads(capsys.readouterr().out)["docker_image"]
    assert main(["up", str(model), "--docker", "--dry-run"]) == 0
    words = shlex.split(capsys.readouterr().out.splitlines()[1])
    assert planned in words
    if not detect().gpus:
        assert "--gpus" not in words and planned.startswith("vllm/vllm-openai-cpu")


@pytest.mark.parametrize("args, says", [
    (["--image", "x:1"], "--image sets the container form, which only --docker runs"),
    (["--volume", "/a:/b", "--pull", "never"], "--volume, --pull set the container form"),
    (["--docker", "--served-model-name", "t"], "--served-model-name applies only to a local model directory run "
                                               "without --docker"),
])
def test_options_the_form_does_not_read_are_an_error(tmp_path, capsys, args, says):
    model = write_tiny_llama(tmp_path / "tiny")
    assert main(["up", str(model), "--dry-run", *args]) == 1
    assert says in capsys.readouterr().err


def test_a_volume_source_that_does_not_exist_is_refused_before_docker_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # nothing may reach a daemon
    model = write_tiny_llama(tmp_path / "tiny")
    code = main(["up", str(model), "--hardware", "xeon6", "--docker", "--detach",
                 "--volume", f"{tmp_path}/absent:/absent:ro"])
    err = capsys.readouterr().err
    assert code == 1 and f"--volume source {tmp_path}/absent does not exist on this machine" in err
