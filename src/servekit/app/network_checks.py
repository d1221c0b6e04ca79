"""Deployment check: the network of each node's container, and what ``docker run`` itself says.

Ranks on several machines reach each other on ports vLLM, NCCL and Gloo open at run time (the
``--master-port``, the data-parallel RPC port, NCCL's ephemeral ports, NIXL's side channel); on
Docker's default bridge network a container has an address of its own behind NAT that other
machines cannot reach, and ``NCCL_SOCKET_IFNAME`` / ``GLOO_SOCKET_IFNAME`` name the host's
interface, which does not exist inside it. A server of a plan that spans several machines runs
with ``--network host`` (vLLM's multi-node docs: run_cluster.sh starts each node's container with
``--network host``). With ``--network host``, ``-p`` does nothing (Docker: "Published ports are
discarded when using host network mode"). A switch given twice is given once.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.command_line import split_docker_run
from servekit.findings import Finding

NETWORK_CODE = "container-network"
PORTS_CODE = "published-ports-ignored"
REPEATED_CODE = "repeated-docker-flag"
MULTI_NODE_SOURCE = "https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html (examples/online_serving/run_cluster.sh)"
_PUBLISH = ("-p", "--publish")
_NETWORK = ("--network", "--net")
_SWITCHES = ("--privileged", "--init", "--rm", "-d", "--detach", "-t", "-i", "-it")


def network_mode(options: Sequence[str]) -> str:
    """``--network``/``--net`` (last wins), ``bridge`` when none is given."""
    mode = "bridge"
    for i, word in enumerate(options):
        name, eq, value = word.partition("=")
        if name in _NETWORK:
            mode = value if eq else (options[i + 1] if i + 1 < len(options) else mode)
    return mode


def published_ports(options: Sequence[str]) -> list[str]:
    out = []
    for i, word in enumerate(options):
        name, eq, value = word.partition("=")
        if name in _PUBLISH:
            out.append(value if eq else (options[i + 1] if i + 1 < len(options) else ""))
        elif word.startswith("-p") and len(word) > 2 and not word.startswith("--"):
            out.append(word[2:])
    return out


def network_findings(docker_argv: Sequence[str], *, several_machines: bool) -> list[Finding]:
    run = split_docker_run([str(w) for w in docker_argv])
    if run is None:
        return []
    options = list(run.options)
    mode, ports = network_mode(options), published_ports(options)
    out = []
    if several_machines and mode != "host":
        interfaces = sorted({name for name, _ in run.env if name.endswith("_SOCKET_IFNAME")})
        also = f"; {', '.join(interfaces)} name(s) a host interface the container does not have" if interfaces else ""
        out.append(Finding(
            "error", NETWORK_CODE,
            f"this plan spans several machines, but its container runs on Docker's {mode} network: ranks on "
            f"other machines cannot reach the ports it opens (published: {', '.join(ports) or 'none'}){also}",
            f"run each node's container with --network host and without -p (as vLLM's multi-node guide does: "
            f"{MULTI_NODE_SOURCE})"))
    if mode == "host" and ports:
        out.append(Finding("warning", PORTS_CODE,
                           f"-p {' -p '.join(ports)} does nothing with --network host: the server's port is the host's",
                           "drop -p"))
    out += _repeated(options)
    return out


def _repeated(options: Sequence[str]) -> list[Finding]:
    seen: set[str] = set()
    out = []
    for word in options:
        if word in _SWITCHES and word in seen:
            out.append(Finding("warning", REPEATED_CODE, f"{word} is given twice", f"give {word} once"))
        seen.add(word)
    return out
