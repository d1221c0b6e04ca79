"""The parallel layout of a plan made without a recipe (``plan DIR --nodes N --tp T --pp P``)
and, across several nodes, its head and worker processes.

``--tp`` and ``--pp`` are vLLM's ``--tensor-parallel-size`` and ``--pipeline-parallel-size``:
the whole deployment's sizes. Their product, the world size, splits evenly over the nodes
(vLLM starts ``world / nnodes`` ranks on each node), and on accelerators a node holds no more
ranks than devices. Without ``--tp``, several nodes use every device: ``devices x nodes / pp``.
The nodes meet through vLLM's multiprocessing rendezvous (``servekit.synthesis.nodes``), over
the interface ``$IFACE_NAME`` names (Gloo for CPU and control traffic, NCCL for GPUs).
"""

from __future__ import annotations

from dataclasses import replace

from servekit.errors import SelectionError
from servekit.records import record
from servekit.synthesis.args import dedupe
from servekit.synthesis.nodes import HEAD_ADDRESS, MASTER_PORT, placement
from servekit.synthesis.plan import Arg, EnvVar, Process

SINGLE, MULTI_TP, MULTI_TP_PP = "single_node_tp", "multi_node_tp", "multi_node_tp_pp"
"""Strategy names of generic plans (the catalog's own names for the same layouts)."""
IFACE = "$IFACE_NAME"
NETWORK_ENV = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")
"""The interface the nodes' collectives use; set as the catalog's multi-node strategies set it."""
_PLACE_SOURCE = "--nodes {n}: vLLM's multiprocessing rendezvous; ranks above 0 run --headless"


@record
class Topology:
    """What the request asks for: nodes, tensor and pipeline parallel sizes (None: planned)."""

    nodes: int = 1
    tp: int | None = None
    pp: int | None = None

    @property
    def spans_nodes(self) -> bool:
        return self.nodes > 1

    @property
    def strategy(self) -> str:
        if not self.spans_nodes:
            return SINGLE
        return MULTI_TP_PP if (self.pp or 1) > 1 else MULTI_TP


def _positive(value: int | None, option: str) -> None:
    if value is not None and value < 1:
        raise SelectionError(f"{option} must be 1 or more, got {value}", fix=f"pass {option} 1, 2, 4 or 8")


def checked_topology(topology: Topology, devices: int, *, cpu: bool) -> Topology:
    """``topology`` with the tensor parallel size of a several-node plan filled in, or a
    SelectionError saying which sizes cannot be laid over the nodes and what would."""
    _positive(topology.nodes, "--nodes")
    _positive(topology.tp, "--tp")
    _positive(topology.pp, "--pp")
    if not topology.spans_nodes:
        return topology
    nodes, pp = topology.nodes, topology.pp or 1
    tp = topology.tp
    if tp is None:
        if devices * nodes % pp:
            raise SelectionError(f"--pp {pp} does not divide the {devices * nodes} devices of {nodes} nodes",
                                 fix="pass --tp with a size whose product with --pp the node count divides")
        tp = devices * nodes // pp
    world = tp * pp
    if world % nodes:
        raise SelectionError(
            f"--tp {tp} x --pp {pp} = {world} ranks do not split evenly over {nodes} nodes",
            fix=f"choose --tp and --pp whose product is a multiple of {nodes}")
    per_node = world // nodes
    if not cpu and per_node > devices:
        raise SelectionError(
            f"--tp {tp} x --pp {pp} puts {per_node} ranks on each of {nodes} nodes, which have {devices} devices each",
            fix=f"lower --tp or --pp, or pass --nodes {-(-world // devices)}")
    return replace(topology, tp=tp, pp=pp)


def size_args(topology: Topology, tp: int, why: str) -> list[Arg]:
    """``--tensor-parallel-size`` (where above 1 or across nodes) and ``--pipeline-parallel-size``."""
    args = []
    if tp > 1 or topology.spans_nodes:
        args.append(Arg("--tensor-parallel-size", tp, why))
    if (topology.pp or 1) > 1:
        args.append(Arg("--pipeline-parallel-size", topology.pp,
                        f"--pp {topology.pp}: pipeline stages, the layers split between them"))
    return args


def network_env() -> tuple[EnvVar, ...]:
    source = "several nodes: the collectives' network interface (Gloo and NCCL socket interface)"
    return tuple(EnvVar(name, IFACE, source) for name in NETWORK_ENV)


def node_processes(model: str, args: tuple[Arg, ...], env: tuple[EnvVar, ...],
                   topology: Topology) -> tuple[Process, ...]:
    """One process on one node, or a head and a worker per other node, each placed by rank."""
    if not topology.spans_nodes:
        return (Process(role="serve", model=model, args=args, env=env),)
    source = _PLACE_SOURCE.format(n=topology.nodes)
    out = []
    for rank in range(topology.nodes):
        place = placement(topology.nodes, rank, HEAD_ADDRESS, MASTER_PORT)
        placed = dedupe([(place, source)])
        out.append(Process(role="head" if rank == 0 else "worker", model=model, args=(*args, *placed),
                           env=env, rank=rank))
    return tuple(out)

