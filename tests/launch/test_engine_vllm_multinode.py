"""A two-node plan of a model no recipe names, run for real: vLLM CPU as node 0 and node 1 in two
network namespaces joined by a veth pair, each started by the very ``--format sh`` script
``servekit plan DIR --nodes 2 --tp 2`` (and ``--pp 2``) prints, as a person runs it on a cluster
(``HEAD_IP``, ``IFACE_NAME`` and ``NODE_IP`` in the environment, the rank as ``$1``).

The head must answer ``/health`` and a completion, inside its namespace; stopping both leaves no
process behind. ``VLLM_CPU_KVCACHE_SPACE=1`` and ``VLLM_CPU_OMP_THREADS_BIND=nobind`` come from
the environment, as a machine's own settings do (both "nodes" share this machine's memory and
cores). Words after the rank go to the engine: the tensor-parallel run adds ``--enforce-eager``,
which saves the compile warm-up. The pipeline-parallel run cannot: vLLM 0.32's CPU worker skips
its warm-up pass in eager mode (``CPUModelRunner.warming_up_model`` returns at
``CompilationMode.NONE``), so a later stage never allocates the buffer it receives activations
in and the first request fails (``assert self.intermediate_tensors is not None`` in
``gpu_model_runner.sync_and_gather_intermediate_tensors``; ``VLLM_CPU_CI_ENV=1`` skips the
warm-up too). It keeps the warm-up and makes it cheap: ``--compilation-config`` with dynamo's
trace-once mode and the eager backend, no inductor compile.

vLLM's Ray executor refuses the CPU platform ("current platform cpu does not support ray"), so
the Ray form's engine is not run here: its rendezvous is (tests/launch/test_engine_ray_nodes.py,
Ray's head and a joining node across the same two namespaces), and its text by its dry run,
``shlex``, ``bash -n`` and shellcheck (tests/app/test_generic_multinode.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.engines.registry import get_engine, native_engine
from servekit.processes import alive, stop_processes
from testing.engines import engine_python
from testing.netns import IFACE, in_namespace, namespace_pids, two_nodes  # noqa: F401 (a fixture)
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

pytestmark = pytest.mark.engine

SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)
EAGER = ("--enforce-eager",)
TRACED_EAGER = ("--compilation-config", '{"mode": 2, "backend": "eager"}')
"""Dynamo traces the model once and the eager backend runs it (``CompilationMode.DYNAMO_TRACE_ONCE``;
vllm/platforms/cpu.py keeps a mode other than VLLM_COMPILE and its backend as given): the CPU
worker's warm-up pass runs, in seconds, with no inductor compile."""
READY_TIMEOUT_S = 420.0
STOP_TIMEOUT_S = 60.0

_PROBE = """
import json, sys, urllib.request
base = sys.argv[1]
if sys.argv[2] == "health":
    with urllib.request.urlopen(base + "/health", timeout=5) as r:
        sys.exit(0 if r.status == 200 else 1)
body = json.dumps({"model": sys.argv[3], "prompt": "Hello, my name is", "max_tokens": 4,
                   "temperature": 0}).encode()
req = urllib.request.Request(base + "/v1/completions", body, {"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=120) as r:
    print(r.read().decode())
"""


@pytest.fixture
def engine_bin() -> Path:
    return engine_python(get_engine(native_engine().id).install.requirement).parent


def _plan_script(capsys, model: Path, *options: str) -> str:
    code = main(["plan", str(model), "--hardware", "local", "--nodes", "2", *options, "--format", "sh"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def _node_env(tmp_path: Path, engine_bin: Path, head: str, own: str) -> dict[str, str]:
    for folder in ("vllm-cache", "inductor", "tmp"):
        (tmp_path / folder).mkdir(exist_ok=True)
    return {
        "PATH": f"{engine_bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "HEAD_IP": head, "NODE_IP": own, "IFACE_NAME": IFACE,
        "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind",
        "VLLM_CACHE_ROOT": str(tmp_path / "vllm-cache"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
        "TMPDIR": str(tmp_path / "tmp"), "HF_HUB_OFFLINE": "1",
        "HF_HOME": os.environ["HF_HOME"], "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
    }


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"


def _wait_healthy(ns: str, url: str, nodes: list[subprocess.Popen], logs: list[Path]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        for proc, log in zip(nodes, logs):
            assert proc.poll() is None, f"node exited with {proc.returncode} before the head was ready:\n{_tail(log)}"
        probe = in_namespace(ns, sys.executable, "-c", _PROBE, url, "health", timeout=30)
        if probe.returncode == 0:
            return
        time.sleep(3)
    pytest.fail(f"the head did not answer /health within {READY_TIMEOUT_S:.0f} s:\n{_tail(logs[0])}")


def _stop(nodes: list[subprocess.Popen]) -> None:
    """SIGTERM each node's process group (the script's shell, vLLM and its workers), then SIGKILL."""
    pgids = [proc.pid for proc in nodes]
    stop_processes(pgids, pgids, ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 10.0)))
    for proc in nodes:
        proc.wait(timeout=30)


def _run_two_nodes(tmp_path: Path, script_text: str, nodes: list[tuple[str, str]], engine_bin: Path,
                   model: Path, engine_args: tuple[str, ...]) -> dict:
    script = tmp_path / "plan.sh"
    script.write_text(script_text, encoding="utf-8")
    head_ip = nodes[0][1]
    started: list[subprocess.Popen] = []
    logs: list[Path] = []
    try:
        for rank, (ns, own) in enumerate(nodes):
            log = tmp_path / f"node{rank}.log"
            logs.append(log)
            with log.open("wb") as out:
                started.append(subprocess.Popen(
                    ["ip", "netns", "exec", ns, "sh", str(script), str(rank), *engine_args],
                    env=_node_env(tmp_path, engine_bin, head_ip, own), cwd=tmp_path, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True))
        url = f"http://{head_ip}:8000"
        _wait_healthy(nodes[0][0], url, started, logs)
        done = in_namespace(nodes[0][0], sys.executable, "-c", _PROBE, url, "complete", str(model), timeout=150)
        assert done.returncode == 0, done.stderr[-3000:] + _tail(logs[0])
        answer = json.loads(done.stdout)
    finally:
        _stop(started)
    assert not alive([p.pid for p in started], [p.pid for p in started]), "a node's process outlived the stop"
    for ns, _ in nodes:
        assert namespace_pids(ns) == [], f"processes left in {ns}"
    return answer


def _assert_completion(answer: dict, model: Path) -> None:
    assert answer["model"] == str(model)
    assert isinstance(answer["choices"][0]["text"], str)
    assert answer["usage"]["completion_tokens"] >= 1


@pytest.fixture
def tiny(tmp_path) -> Path:
    return write_tiny_llama(tmp_path / "tiny", shape=SHAPE, dtype="bfloat16")


def test_two_node_tensor_parallel_plan_serves_across_namespaces(tmp_path, capsys, two_nodes, engine_bin, tiny):
    text = _plan_script(capsys, tiny, "--tp", "2")
    assert "--nnodes 2" in text and "--headless" in text and "--tensor-parallel-size 2" in text
    _assert_completion(_run_two_nodes(tmp_path, text, two_nodes, engine_bin, tiny, EAGER), tiny)


def test_two_node_pipeline_parallel_plan_serves_across_namespaces(tmp_path, capsys, two_nodes, engine_bin, tiny):
    text = _plan_script(capsys, tiny, "--pp", "2")
    assert "--pipeline-parallel-size 2" in text and "--tensor-parallel-size 1" in text
    _assert_completion(_run_two_nodes(tmp_path, text, two_nodes, engine_bin, tiny, TRACED_EAGER), tiny)
