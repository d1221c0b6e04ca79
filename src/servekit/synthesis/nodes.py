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


def ray_head_command(address: str = HEAD_ADDRESS) -> str:
    """Started on the head before ``vllm serve`` (it returns once Ray's head runs)."""
    return f"ray start --head --port {RAY_PORT} --node-ip-address {address}"


def _ray_worker(worker: Process, head_address: str) -> Process:
    args = (Arg("--address", f"{head_address}:{RAY_PORT}", _RAY_SOURCE),
            Arg("--node-ip-address", NODE_ADDRESS, _RAY_SOURCE),
            Arg("--block", None, _RAY_SOURCE))
    return Process(role=worker.role, model=None, args=args, env=worker.env, rank=worker.rank, port=None,
                   program=RAY_PROGRAM)


def ray_form(head: Process, workers: list[Process], head_address: str = HEAD_ADDRESS) -> list[Process]:
    """The head's ``vllm serve`` without the multiprocessing flags, and one ``ray start`` per worker."""
    serve = replace(head, args=tuple(arg for arg in head.args if arg.flag not in MP_FLAGS))
    return [serve, *(_ray_worker(w, head_address) for w in workers)]
