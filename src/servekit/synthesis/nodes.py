"""How the nodes of a multi-node plan find each other: vLLM's own rendezvous, each node's
address, and the Ray form.

- **vLLM's multiprocessing rendezvous** (the default): every node runs ``vllm serve`` with
  ``--nnodes N --node-rank R --master-addr HEAD [--master-port P]``; the nodes above rank 0
  add ``--headless`` (no API server). Source: vLLM's "Parallelism and Scaling" guide, "Running
  vLLM with MultiProcessing" (https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html);
  the flags are ``ParallelConfig`` fields (``nnodes``, ``node_rank``, ``master_addr``,
  ``master_port``, default 29501) in vLLM's ``vllm/config/parallel.py``.
- **The node's own address**: vLLM reads it from ``VLLM_HOST_IP`` (``vllm/utils/network_utils.py``
  ``get_ip``; without it vLLM guesses from the default route, which a cluster's fabric
  network may not carry). The head's own address is ``$HEAD_IP``; every other node's is ``$NODE_IP``.
- **The Ray form** (a plan whose serve arguments say ``--distributed-executor-backend ray``):
  the head starts Ray's head (``ray start --head --port 6379``), each other node joins it
  (``ray start --address HEAD:6379 --block``), and only the head runs ``vllm serve``, without
  the multiprocessing flags, which apply to the ``mp`` backend alone. vLLM waits up to 1800 s
  for the nodes to join (``PG_WAIT_TIMEOUT`` in ``vllm/v1/executor/ray_utils.py``). Sources: the
  same vLLM guide, "Running vLLM on multiple nodes" with Ray, and Ray's CLI reference
  (https://docs.ray.io/en/latest/cluster/cli.html#ray-start: default port 6379,
  ``--node-ip-address``, ``--block``).
- **Platforms that span hosts through Ray alone** (``RAY_PLATFORMS``): vLLM's TPU plugin
  (tpu-inference) sets the executor itself from ``TPU_MULTIHOST_BACKEND`` whatever the serve
  arguments say: unset, one host (``uni``, or its multiprocessing executor for pipeline stages on
  one host); ``ray``, its Ray executor (``TpuPlatform.check_and_update_config`` in
  ``tpu_inference/platforms/tpu_platform.py``). The ``--nnodes`` rendezvous never reaches a second
  host there, so a TPU plan over several hosts takes the Ray form with ``TPU_MULTIHOST_BACKEND=ray``
  on every node (as tpu-inference's ``scripts/multihost/run_cluster.sh`` and its multi-host GKE
  manifests set it).
"""

from __future__ import annotations

from dataclasses import replace

from servekit.synthesis.plan import Arg, EnvVar, Plan, Process

HEAD_ADDRESS = "$HEAD_IP"
NODE_ADDRESS = "$NODE_IP"
HOST_IP_ENV = "VLLM_HOST_IP"
MASTER_PORT = 29501
"""vLLM's default ``--master-port`` (``ParallelConfig.master_port``)."""
MP_FLAGS = ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless")
"""The multiprocessing rendezvous flags (vLLM applies them to the ``mp`` backend only)."""
RAY_BACKEND = ("--distributed-executor-backend", "ray")
RAY_PORT = 6379
RAY_PROGRAM = ("ray", "start")
RAY_NOTE = ("the Ray form: every node needs Ray beside vLLM (pip install ray), and the same model path; "
            "start the workers' part on each other node, vLLM waits for them to join")
RAY_PLATFORMS: dict[str, tuple[tuple[str, str], ...]] = {"tpu": (("TPU_MULTIHOST_BACKEND", "ray"),)}
"""Platforms whose vLLM plugin spans hosts through Ray only, and the env that selects its Ray executor."""
RAY_NODE_ENV: dict[str, tuple[tuple[str, str], ...]] = {
    "ascend": (("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "1"),),
}
"""Settings every node of the Ray form needs on a platform, exported before ``ray start``: on Ascend
NPUs, Ray must leave ``ASCEND_RT_VISIBLE_DEVICES`` to vLLM (vllm-ascend's Ray guide,
docs/source/tutorials/features/ray.md: set for Ray above 2.1 "to avoid device recognition issues")."""
_RAY_NODE_SOURCE = "vllm-ascend's Ray guide (docs/source/tutorials/features/ray.md): Ray leaves the NPU selection to vLLM"
RAY_PLATFORM_NOTES = {
    "tpu": "TPU hosts: tpu-inference's multi-host guide (docs/multi-host.md) runs the hosts of one multi-host "
           "slice (v6e-16: four hosts) as the Ray cluster, whose chips share the slice's interconnect; hosts "
           "that are single-host slices each (a v6e-8 is one) share none, and Google's Multislice over the "
           "data-center network takes multi-host slices only (cloud.google.com/tpu/docs/tpu-gke-multislice), "
           "so choose a multi-host slice's hosts; tpu-inference's parallelism table (docs/includes/parallelism.md) "
           "says which parallelism it has tested across hosts",
}
"""What a plan of such a platform adds to the Ray form's note."""
_RAY_PLATFORM_SOURCE = ("the TPU plugin picks its executor from TPU_MULTIHOST_BACKEND; ray spans hosts "
                        "(tpu_inference/platforms/tpu_platform.py check_and_update_config)")
_RAY_PLATFORM_WORKER_SOURCE = ("the platform's plugin spans hosts through Ray only (TPU_MULTIHOST_BACKEND=ray; "
                               "Ray's ray start, docs.ray.io cluster CLI)")
_HOST_IP_SOURCE = "vLLM reads the node's own address from VLLM_HOST_IP (vllm/utils/network_utils.py get_ip)"
_RAY_SOURCE = "serve arguments: --distributed-executor-backend ray (Ray's ray start, docs.ray.io cluster CLI)"


def placement(nodes: int, rank: int, address: str, port: int | None = None) -> list[str]:
    """``--nnodes N --node-rank R --master-addr A [--master-port P]``, ``--headless`` above rank 0."""
    tokens = ["--nnodes", str(nodes), "--node-rank", str(rank), "--master-addr", address]
    if port is not None:
        tokens += ["--master-port", str(port)]
    return tokens + (["--headless"] if rank > 0 else [])


def spans_nodes(plan: Plan) -> bool:
    """A head and its workers on several machines."""
    return plan.deploy_type == "multi_node" and bool(plan.role("head")) and len(plan.processes) > 1


def node_env(plan: Plan, proc: Process) -> tuple[EnvVar, ...]:
    """The node's own address for a process of a plan that spans nodes (``VLLM_HOST_IP``);
    nothing for one that sets it itself or runs on one machine."""
    if not spans_nodes(plan) or any(var.name == HOST_IP_ENV for var in (*plan.env, *proc.env)):
        return ()
    own = HEAD_ADDRESS if proc.role == "head" else NODE_ADDRESS
    return (EnvVar(HOST_IP_ENV, own, _HOST_IP_SOURCE),)


def uses_ray(proc: Process) -> bool:
    return any((arg.flag, arg.value) == RAY_BACKEND for arg in proc.args)


def spans_one_engine(proc: Process) -> bool:
    """The process is the head of one engine whose ranks span the nodes (vLLM's multiprocessing
    rendezvous, ``--nnodes``), as opposed to data-parallel ranks that each run on their own node."""
    return any(arg.flag == "--nnodes" for arg in proc.args)


def platform_ray_env(platform: str, head: Process) -> tuple[EnvVar, ...]:
    """The env that puts a platform's plugin on its Ray executor when one engine spans hosts and the
    platform does that through Ray only (``RAY_PLATFORMS``); nothing otherwise (a platform that
    takes vLLM's own rendezvous, or data-parallel ranks each on one host)."""
    if not spans_one_engine(head):
        return ()
    return tuple(EnvVar(name, value, _RAY_PLATFORM_SOURCE) for name, value in RAY_PLATFORMS.get(platform, ()))


def ray_node_env(platform: str) -> tuple[EnvVar, ...]:
    """What every node of the Ray form sets on ``platform`` before ``ray start`` (``RAY_NODE_ENV``)."""
    return tuple(EnvVar(name, value, _RAY_NODE_SOURCE) for name, value in RAY_NODE_ENV.get(platform, ()))


def with_env(proc: Process, env: tuple[EnvVar, ...]) -> Process:
    """``proc`` with ``env`` set (over any value it had)."""
    names = {var.name for var in env}
    return replace(proc, env=(*(var for var in proc.env if var.name not in names), *env))


def ray_head_argv(address: str = HEAD_ADDRESS, block: bool = False) -> list[str]:
    """Started on the head before ``vllm serve``: it returns once Ray's head runs, or, with
    ``block``, holds the foreground (a container's main process)."""
    return [*RAY_PROGRAM, "--head", "--port", str(RAY_PORT), "--node-ip-address", address,
            *(["--block"] if block else [])]


def _ray_worker(worker: Process, head_address: str, source: str) -> Process:
    args = (Arg("--address", f"{head_address}:{RAY_PORT}", source),
            Arg("--node-ip-address", NODE_ADDRESS, source),
            Arg("--block", None, source))
    return Process(role=worker.role, model=None, args=args, env=worker.env, rank=worker.rank, port=None,
                   program=RAY_PROGRAM)


def ray_form(head: Process, workers: list[Process], head_address: str = HEAD_ADDRESS,
             platform: str | None = None) -> list[Process]:
    """The head's ``vllm serve`` without the multiprocessing flags, and one ``ray start`` per worker
    (``platform``: the hardware platform, whose plugin may span hosts through Ray only)."""
    serve = replace(head, args=tuple(arg for arg in head.args if arg.flag not in MP_FLAGS))
    source = _RAY_PLATFORM_WORKER_SOURCE if platform in RAY_PLATFORMS and not uses_ray(head) else _RAY_SOURCE
    return [serve, *(_ray_worker(w, head_address, source) for w in workers)]
