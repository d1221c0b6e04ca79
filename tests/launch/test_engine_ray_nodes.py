"""The Ray form's rendezvous, run for real: the very ``--format sh`` script of a two-host TPU plan
(``plan MODEL --hardware trillium --nodes 2``) runs as node 0 and node 1 in two network
namespaces joined by a veth pair, with the pinned Ray (``servekit engine install ray==2.60.0``,
scripts/install_engines.sh): the head's part starts Ray's head, the worker's part joins it with
``ray start --address``, and the head's ``vllm serve`` then finds a cluster of both nodes.

``vllm serve`` itself is a stand-in here, and only it: there is no TPU on this machine, and vLLM's
Ray executor refuses the CPU platform. The stand-in (``STAND_IN``, first on the head's PATH) does
what the TPU plugin's Ray executor does first: it joins the cluster at ``$HEAD_IP:6379`` and runs
a task on every node, each reporting its address and the ``TPU_MULTIHOST_BACKEND`` its Ray worker
process sees (Ray's workers inherit the environment ``ray start`` ran in, so the setting each
node's part exports is what the plugin reads there). Each namespace has its own ``RAY_TMPDIR``,
as two hosts have their own ``/tmp``.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.processes import alive, stop_processes
from testing.engines import engine_python
from testing.netns import IFACE, in_namespace, namespace_pids, two_nodes  # noqa: F401 (a fixture)

pytestmark = pytest.mark.engine

RAY = "ray==2.60.0"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
JOIN_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0

STAND_IN = '''#!{python}
"""Stands in for `vllm serve` (no TPU here; vLLM's Ray executor refuses the CPU platform): joins
the Ray cluster as vLLM's driver does and reports what every node's Ray worker sees."""
import json, os, sys, time
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

ray.init(address=os.environ["HEAD_IP"] + ":6379", logging_level="ERROR")
deadline = time.monotonic() + {timeout}
while len([n for n in ray.nodes() if n["Alive"]]) < 2 and time.monotonic() < deadline:
    time.sleep(1)

@ray.remote(num_cpus=0)
def seen():
    return {{"address": ray.util.get_node_ip_address(),
             "TPU_MULTIHOST_BACKEND": os.environ.get("TPU_MULTIHOST_BACKEND")}}

alive = [n for n in ray.nodes() if n["Alive"]]
reports = ray.get([seen.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
                   for n in alive])
with open(os.environ["STAND_IN_REPORT"], "w") as out:
    json.dump({{"argv": sys.argv[1:], "nodes": reports,
               "TPU_MULTIHOST_BACKEND": os.environ.get("TPU_MULTIHOST_BACKEND")}}, out)
'''


@pytest.fixture
def ray_bin() -> Path:
    return engine_python(RAY).parent


def _plan_script(capsys) -> str:
    code = main(["plan", MODEL, "--hardware", "trillium", "--nodes", "2", "--format", "sh"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.fixture
def short_tmp():
    """A folder with a short path: Ray's sockets live under its temp folder, and a socket path
    may hold at most 107 bytes (pytest's tmp_path can be longer)."""
    folder = Path(tempfile.mkdtemp(prefix="skray", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _node_env(tmp_path: Path, short_tmp: Path, rank: int, path: str, head: str, own: str) -> dict[str, str]:
    tmp = short_tmp / f"n{rank}"
    tmp.mkdir(exist_ok=True)
    return {"PATH": path, "HOME": str(tmp_path), "HEAD_IP": head, "NODE_IP": own, "IFACE_NAME": IFACE,
            "RAY_TMPDIR": str(tmp), "TMPDIR": str(tmp), "RAY_USAGE_STATS_ENABLED": "0",
            "STAND_IN_REPORT": str(tmp_path / "report.json")}


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"


def _stop(nodes: list[tuple[str, str]], started: list[subprocess.Popen], path_env: dict[str, str]) -> None:
    """``ray stop`` on each node (Ray's daemons leave the part's process group), then the parts."""
    for (ns, _), env in zip(nodes, path_env.values()):
        subprocess.run(["ip", "netns", "exec", ns, "ray", "stop", "--force"], env=env, capture_output=True,
                       timeout=STOP_TIMEOUT_S)
    pgids = [proc.pid for proc in started]
    stop_processes(pgids, pgids, ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)))
    for proc in started:
        proc.wait(timeout=30)


def test_the_ray_form_of_a_tpu_plan_joins_two_hosts(tmp_path, short_tmp, capsys, two_nodes, ray_bin):
    text = _plan_script(capsys)
    assert "export TPU_MULTIHOST_BACKEND=ray" in text and "--nnodes" not in text
    script = tmp_path / "plan.sh"
    script.write_text(text, encoding="utf-8")
    stand_in_dir = tmp_path / "stand-in"
    stand_in_dir.mkdir()
    stand_in = stand_in_dir / "vllm"
    stand_in.write_text(STAND_IN.format(python=ray_bin / "python", timeout=JOIN_TIMEOUT_S), encoding="utf-8")
    stand_in.chmod(0o755)
    head_ip = two_nodes[0][1]
    path = f"{stand_in_dir}:{ray_bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    envs = {rank: _node_env(tmp_path, short_tmp, rank, path, head_ip, own) for rank, (_, own) in enumerate(two_nodes)}
    started: list[subprocess.Popen] = []
    logs = [tmp_path / f"node{rank}.log" for rank in (0, 1)]
    report = tmp_path / "report.json"
    try:
        for rank, (ns, _) in enumerate(two_nodes):
            if rank == 1:  # the worker joins a head that runs: wait for Ray's head to answer
                deadline = time.monotonic() + JOIN_TIMEOUT_S
                while in_namespace(two_nodes[1][0], "sh", "-c", f"PATH={path} ray status --address {head_ip}:6379",
                                   timeout=60).returncode != 0:
                    assert started[0].poll() is None, f"the head's part exited:\n{_tail(logs[0])}"
                    assert time.monotonic() < deadline, f"Ray's head never answered:\n{_tail(logs[0])}"
                    time.sleep(2)
            with logs[rank].open("wb") as out:
                started.append(subprocess.Popen(["ip", "netns", "exec", ns, "sh", str(script), str(rank)],
                                                env=envs[rank], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                                start_new_session=True))
        assert started[0].wait(timeout=JOIN_TIMEOUT_S + 60) == 0, _tail(logs[0])
        assert report.exists(), _tail(logs[0])
        seen = json.loads(report.read_text())
    finally:
        _stop(two_nodes, started, envs)
    assert seen["argv"][:2] == ["serve", MODEL] and "--tensor-parallel-size" in seen["argv"]
    assert seen["TPU_MULTIHOST_BACKEND"] == "ray"
    assert sorted(n["address"] for n in seen["nodes"]) == sorted(own for _, own in two_nodes)
    assert all(n["TPU_MULTIHOST_BACKEND"] == "ray" for n in seen["nodes"])  # the worker's export reaches Ray
    assert not alive([p.pid for p in started], [p.pid for p in started]), "a node's part outlived the stop"
    for ns, _ in two_nodes:
        assert namespace_pids(ns) == [], f"processes left in {ns}"
