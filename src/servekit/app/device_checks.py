"""Deployment check: the devices a server may use on its node cover what its command line asks
for there.

A vLLM server uses ``DP-local x TP x PP / nodes`` devices on each node (``--data-parallel-size-local``,
else ``--data-parallel-size``; one when it serves a single ``--data-parallel-rank``; the TP x PP
world is spread over ``--nnodes``). Its environment's visible-devices variable
(``servekit.hardware.visible``) and, in the container form, the ``docker run`` device flags
(``--gpus``, ``--device /dev/davinciN``) must show it at least that many, all of them devices the
node has. A placement Ray makes (``--distributed-executor-backend ray``) is Ray's, not checked here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from servekit.engines.common.command_line import split_docker_run
from servekit.engines.vllm.launch import VllmLaunch, parse_vllm_argv
from servekit.errors import ServekitError
from servekit.findings import Finding
from servekit.hardware.profile import HardwareProfile
from servekit.hardware.visible import listed_devices, visible_devices_env

CODE = "visible-devices"
CONTAINER_CODE = "container-devices"


@dataclass(frozen=True)
class NodeShare:
    """The parallel layout of one server, as far as one node goes."""

    tp: int = 1
    pp: int = 1
    dp_local: int = 1
    nodes: int = 1
    ray: bool = False

    @property
    def per_node(self) -> int | None:
        """Devices the server uses on its node; None when Ray places the ranks."""
        if self.ray:
            return None
        return self.dp_local * math.ceil(self.tp * self.pp / max(1, self.nodes))

    def layout(self) -> str:
        parts = [f"--data-parallel-size-local {self.dp_local}"] if self.dp_local > 1 else []
        parts += [f"--tensor-parallel-size {self.tp}", f"--pipeline-parallel-size {self.pp}"]
        spread = f" over --nnodes {self.nodes}" if self.nodes > 1 else ""
        return " x ".join(parts) + spread


def _int(launch: VllmLaunch, flag: str, default: int) -> int:
    try:
        value = launch.get_int(flag, default)
    except ServekitError:
        return default  # a value the shell fills in ($N), or one lint reports
    return value if value is not None and value > 0 else default


def node_share(argv: Sequence[str]) -> NodeShare:
    launch = parse_vllm_argv([str(w) for w in argv], strict=False)
    dp = _int(launch, "--data-parallel-size", 1)
    dp_local = 1 if launch.has("--data-parallel-rank") else _int(launch, "--data-parallel-size-local", dp)
    return NodeShare(_int(launch, "--tensor-parallel-size", 1), _int(launch, "--pipeline-parallel-size", 1),
                     dp_local, _int(launch, "--nnodes", 1),
                     launch.get("--distributed-executor-backend") == "ray")


def visible_findings(share: NodeShare, env: dict[str, str], profile: HardwareProfile) -> list[Finding]:
    """The visible-devices variable against the server's share of its node."""
    name = visible_devices_env(profile.platform)
    value = env.get(name) if name else None
    need = share.per_node
    count = listed_devices(str(value)) if value is not None else None
    if name is None or count is None or need is None:
        return []
    out = []
    if count < need:
        per_rank = share.tp * share.pp // max(1, share.nodes) or 1
        fewer = (f"lower --data-parallel-size-local to {count // per_rank}, or " if share.dp_local > 1
                 and count >= per_rank else "")
        out.append(Finding(
            "error", CODE,
            f"{name}={value} shows {count} device(s), but {share.layout()} uses {need} on this node",
            f"{fewer}list {need} devices in {name} ({','.join(map(str, range(need)))} on a node of its own)"))
    ids = [int(float(part)) for part in str(value).split(",")]
    if profile.device_count and max(ids) >= profile.device_count:
        out.append(Finding(
            "error", CODE, f"{name}={value} names device {max(ids)}, but a {profile.id} node has "
            f"{profile.device_count} (ids 0-{profile.device_count - 1})",
            f"list ids below {profile.device_count} in {name}"))
    return out


def exposed_devices(docker_argv: Sequence[str]) -> int | None:
    """How many accelerators a ``docker run`` exposes: ``--gpus N`` or ``device=...``, or one
    ``/dev/davinciN`` per NPU; None for all of the node's (``--gpus all``, ``/dev/dri``) or none stated."""
    run = split_docker_run([str(w) for w in docker_argv])
    if run is None:
        return None
    options = list(run.options)
    davinci = [w for w in options if w.startswith("/dev/davinci") and w[len("/dev/davinci"):].isdigit()]
    if davinci:
        return len(davinci)
    for i, word in enumerate(options):
        value = options[i + 1] if word == "--gpus" and i + 1 < len(options) else (
            word.partition("=")[2] if word.startswith("--gpus=") else None)
        if value is None:
            continue
        value = value.strip("'\"")
        if value.isdigit():
            return int(value)
        if value.startswith("device="):
            return len([d for d in value.removeprefix("device=").split(",") if d.strip()])
    return None


def container_findings(share: NodeShare, docker_argv: Sequence[str]) -> list[Finding]:
    exposed, need = exposed_devices(docker_argv), share.per_node
    if exposed is None or need is None or exposed >= need:
        return []
    return [Finding("error", CONTAINER_CODE,
                    f"the container is given {exposed} device(s), but {share.layout()} uses {need} on this node",
                    f"give the container {need} devices (or all of the node's)")]
