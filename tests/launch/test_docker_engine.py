"""``servekit up --docker`` against a real Docker engine: Debian's docker.io, which
``scripts/install_docker.sh`` installs and starts, and the base image it builds without any
registry (``debootstrap --variant=minbase`` of Debian bookworm, then ``docker import``). The tests
skip, saying why, where no Docker engine answers ``docker info`` or the base image is absent.

The image. No registry is reachable here, so the vLLM CPU image the plan names
(``vllm/vllm-openai-cpu``) cannot be pulled. The test makes one of that image family from the
base image instead: the facts servekit renders the command for are the family's own
(``ENTRYPOINT ["vllm", "serve"]``, ``WORKDIR /vllm-workspace``, a ``PATH`` that leads to the
engine's environment: docker/Dockerfile.cpu in github.com/vllm-project/vllm), and the engine is
the pinned vLLM CPU environment servekit installs (``SERVEKIT_ENGINES_DIR``), bind-mounted
read-only together with the Python it was made from, each at its own path (a virtual
environment's scripts name their interpreter by absolute path). ``up --docker --image`` runs it
in place of the plan's image and ``--volume`` mounts the two folders: the options a person uses
for a mirror or a locally built image. ``--pull never`` keeps Docker from asking a registry.

What cannot run here: ``--gpus`` (no NVIDIA container runtime), ``--privileged`` and
``--ulimit memlock=-1`` (the machine withholds capabilities, CAP_SYS_RESOURCE among them). Their
failure is tested for real: ``up --docker`` of a GPU plan exits 1 naming the cause and leaves no
container and no run; and for each flag, the daemon's own refusal is one servekit explains. No
plan renders ``--ulimit`` today, so that one is checked at the daemon only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from launch.cpu_catalog import HARDWARE, RECIPE_ID, cpu_catalog
from launch.engine_runs import port_is_free, up_detached, use_engine, verify_json
from servekit.cli.app import main
from servekit.engines.registry import native_engine
from servekit.launch import records
from servekit.launch.docker_run import LABEL, run_failure, run_words
from servekit.processes import free_port
from testing.engines import engine_python
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

pytestmark = pytest.mark.engine

BASE_IMAGE = "servekit-ci/debian:bookworm"
"""Built by scripts/install_docker.sh."""
SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)
EXPECTED_KV_TOKENS = 1 * 1024**3 // (2 * 2 * 2 * 64 * 2)
"""The recipe's 1 GiB KV pool / (layers x K and V x kv_heads x head_dim x 2 bytes of bfloat16)."""
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _docker(cli: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def docker() -> str:
    """The docker CLI, once a Docker engine answers it and the base image is there."""
    cli = shutil.which("docker")
    if cli is None:
        pytest.skip("the docker CLI is not installed here (scripts/install_docker.sh installs Debian's docker.io)")
    info = _docker(cli, "info", "--format", "{{.ServerVersion}}", timeout=30)
    if info.returncode != 0 or not info.stdout.strip():
        said = (info.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"no Docker engine answers docker info ({said}); scripts/install_docker.sh starts one")
    if _docker(cli, "image", "inspect", BASE_IMAGE).returncode != 0:
        pytest.skip(f"the base image {BASE_IMAGE} is not here; scripts/install_docker.sh builds it")
    return cli


@dataclass(frozen=True)
class EngineImage:
    tag: str
    volumes: tuple[str, ...]
    """``--volume`` values: the engine's environment and its Python, read-only at their own paths."""


@pytest.fixture(scope="module")
def engine_image(docker) -> EngineImage:
    """An image of the vLLM CPU family made from the base image (the module docstring says why)."""
    python = Path(engine_python(native_engine().install.requirement))
    environment = python.parents[1]
    base = subprocess.run([str(python), "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                          text=True, timeout=120, check=True).stdout.strip()
    tag = f"servekit-test/vllm-openai-cpu:local-{os.getpid()}"  # one per session: sessions share the daemon
    name = f"servekit-test-build-{os.getpid()}"
    created = _docker(docker, "create", "--pull", "never", "--name", name, BASE_IMAGE, "true")
    assert created.returncode == 0, created.stderr
    try:
        committed = _docker(docker, "commit", "--change", f"ENV PATH={environment}/bin:{PATH}",
                            "--change", "WORKDIR /vllm-workspace", "--change", 'ENTRYPOINT ["vllm", "serve"]',
                            "--change", "CMD []", name, tag)
        assert committed.returncode == 0, committed.stderr
    finally:
        _docker(docker, "rm", "--force", name)
    yield EngineImage(tag, (f"{environment}:{environment}:ro", f"{base}:{base}:ro"))
    _docker(docker, "rmi", "--force", tag)


def _containers(docker: str, run: str | None = None) -> list[str]:
    """Ids of the containers labelled for ``run`` (any run when None), running or not."""
    label = LABEL if run is None else f"{LABEL}={run}"
    listed = _docker(docker, "ps", "--all", "--no-trunc", "--filter", f"label={label}", "--format", "{{.ID}}")
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.split()


def test_a_cpu_plan_of_a_tiny_model_runs_in_its_container(docker, engine_image, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the plan mounts ~/.cache/huggingface
    use_engine(native_engine().id, monkeypatch)
    model = write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")
    catalog = cpu_catalog(tmp_path / "catalog", model)
    volumes = [word for volume in engine_image.volumes for word in ("--volume", volume)]
    args = [RECIPE_ID, "--catalog", str(catalog), "--hardware", HARDWARE, "--docker", "--image", engine_image.tag,
            "--pull", "never", *volumes, "--port", str(free_port())]
    assert main(["up", *args, "--dry-run"]) == 0
    printed = capsys.readouterr().out.splitlines()[1]
    assert not {"--gpus", "--privileged", "--ulimit"} & set(printed.split())  # the CPU form asks for none
    started = up_detached(capsys, *args, "--ready-timeout", "900")
    run = started["run"]
    try:
        (process,) = records.load(run).processes
        assert list(process.argv) == run_words(docker, printed, run, "serve")  # the printed command, as run
        assert _containers(docker, run) == [process.container]
        code, doc, err = verify_json(capsys, run)
        assert code == 0, (doc, err)
        assert doc["ok"] and {p["name"] for p in doc["probes"]} >= {"health", "models", "chat", "stream", "metrics"}
        assert doc["measured"]["kv_tokens"] == doc["predicted"]["kv_tokens"] == EXPECTED_KV_TOKENS
    finally:
        assert main(["down", run]) == 0
    assert _containers(docker, run) == []
    assert port_is_free(started["url"])


def test_a_gpu_plan_exits_1_naming_the_cause_and_leaves_nothing(docker, tmp_path, capsys, monkeypatch):
    """The h100 form asks for ``--gpus all``, which no runtime here can grant. The plan's image is
    not here and no registry answers, so the base image stands in (``--image``, ``--pull never``):
    the failure must be the device's, not the image's."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    model = write_tiny_llama(tmp_path / "tiny")
    before = _containers(docker)
    code = main(["up", str(model), "--hardware", "h100", "--docker", "--image", BASE_IMAGE, "--pull", "never",
                 "--detach", "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 1
    assert "--gpus" in err and "could not select device driver" in err and "--docker --dry-run" in err
    assert "Traceback" not in err
    assert records.list_ids() == []
    assert sorted(_containers(docker)) == sorted(before)


@pytest.mark.parametrize("flag", [("--gpus", "all"), ("--privileged",), ("--ulimit", "memlock=-1")],
                         ids=lambda flag: flag[0].lstrip("-"))
def test_what_this_host_cannot_grant_fails_with_the_cause_named(docker, flag):
    done = _docker(docker, "run", "--rm", "--pull", "never", *flag, BASE_IMAGE, "true")
    if done.returncode == 0:
        pytest.skip(f"this host grants {' '.join(flag)}: there is no failure to explain")
    error = run_failure(done.stderr)
    assert flag[0] in error.message, (error.message, done.stderr)  # the cause names the flag
    assert "Error response from daemon" in error.message and error.fix
