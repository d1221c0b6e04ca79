"""``up --docker`` runs the plan's exact ``docker run`` command through the docker CLI; ``down``
stops and removes the container. Without a Docker engine it refuses and names the fix."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time

import pytest

from launch import standin_docker
from servekit.cli.app import main
from servekit.launch import records
from servekit.launch.docker_run import published_port, run_words
from servekit.processes import free_port, port_free

MODEL = ("meta-llama/Llama-3.1-8B-Instruct", "--hardware", "xeon6")


def test_without_a_docker_engine_up_docker_exits_1_with_the_fix(monkeypatch, capsys):
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI is not installed here")
    # The real docker CLI, pointed at a socket no daemon listens on (none runs on this machine
    # anyway; this keeps the test the same where one does).
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    code = main(["up", *MODEL, "--docker", "--detach"])
    err = capsys.readouterr().err
    assert code == 1
    assert "no Docker engine answers here" in err and "Cannot connect to the Docker daemon" in err
    assert "--docker --dry-run" in err
    assert records.list_ids() == []


def test_the_command_run_is_the_printed_one_detached_and_named(tmp_path):
    command = "docker run --privileged -p 8123:8123 -v ~/.cache/huggingface:/root/.cache/huggingface img m --port 8123"
    words = run_words("/usr/bin/docker", command, "RUN", "serve")
    assert words[:8] == ["/usr/bin/docker", "run", "--detach", "--init", "--name", "servekit-RUN-serve", "--label",
                         "servekit.run=RUN"]
    expected = shlex.split(command)[2:]
    expected[4] = os.path.expanduser(expected[4])  # as the shell expands it
    assert words[8:] == expected
    assert published_port(words) == 8123


@pytest.fixture
def standin_docker_on_path(tmp_path, monkeypatch):
    """A stand-in ``docker`` first on PATH (standin_docker.py says why)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "docker"
    program.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(standin_docker.__file__)} \"$@\"\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_DOCKER_STATE", str(tmp_path / "state"))
    return tmp_path / "state"


def _calls(state) -> list[list[str]]:
    return [json.loads(line) for line in (state / "calls.jsonl").read_text().splitlines()]


def test_with_a_docker_engine_up_runs_the_container_and_down_removes_it(standin_docker_on_path, capsys):
    state = standin_docker_on_path
    port = free_port()
    assert main(["up", *MODEL, "--docker", "--dry-run", "--port", str(port)]) == 0
    printed = capsys.readouterr().out.splitlines()[1]
    code = main(["up", *MODEL, "--docker", "--port", str(port), "--detach", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    started = json.loads(out.strip().splitlines()[-1])
    (process,) = started["processes"]
    try:
        record = records.load(started["run"])
        assert record.state == "ready" and started["url"] == f"http://127.0.0.1:{port}"
        assert process["container"] == record.containers[0]
        (ran,) = [c for c in _calls(state) if c[0] == "run"]
        assert ran == [*run_words("docker", printed, started["run"], "serve")[1:]]
        assert main(["ps", "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["processes"][0]["container"] == process["container"]
    finally:
        assert main(["down", started["run"]]) == 0
    assert [c[0] for c in _calls(state)][-2:] == ["stop", "rm"]
    assert not (state / f"{process['container']}.json").exists()
    deadline = time.monotonic() + 10
    while not port_free("127.0.0.1", port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert port_free("127.0.0.1", port)


def test_up_docker_of_a_several_process_plan_says_what_to_do(tmp_path, capsys):
    from launch.pd_catalog import HARDWARE, RECIPE_ID, pd_catalog
    from testing.tiny_model import write_tiny_llama

    catalog = pd_catalog(tmp_path / "catalog", write_tiny_llama(tmp_path / "tiny"))
    code = main(["up", RECIPE_ID, "--catalog", str(catalog), "--hardware", HARDWARE, "--docker", "--detach"])
    err = capsys.readouterr().err
    assert code == 1
    assert "runs 3 processes; --docker starts single-server plans" in err and "without --docker" in err
    assert records.list_ids() == []
