"""Deployment check: the devices a server may use on its node cover what its command line asks
for there.

A vLLM server uses ``DP-local x TP x PP`` devices on its node, or its share of the world over
``--nnodes`` (``servekit.engines.vllm.layout``, vLLM's own rules). Its environment's visible-devices variable
(``servekit.hardware.visible``) and, in the container form, the ``docker run`` device flags
(``--gpus``, ``--device /dev/davinciN``) must show it at least that many, all of them devices the
node has. A placement Ray makes (``--distributed-executor-backend ray``) is Ray's, not checked here.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.command_line import split_docker_run
from servekit.engines.vllm.launch import parse_vllm_argv
from servekit.engines.vllm.layout import ParallelLayout, parallel_layout
from servekit.errors import ServekitError
from servekit.findings import Finding
from servekit.hardware.profile import HardwareProfile
from servekit.hardware.visible import listed_devices, visible_devices_env
from servekit.records import record

CODE = "visible-devices"
CONTAINER_CODE = "container-devices"


@record
class NodeShare:
    """One server's parallel layout (``servekit.engines.vllm.layout``) and whether Ray places its ranks."""

    layout: ParallelLayout
    ray: bool = False

    @property
    def per_node(self) -> int | None:
        """Devices the server uses on its node; None when Ray places the ranks."""
        return None if self.ray else self.layout.devices_per_node

    def describe(self) -> str:
        return self.layout.describe()


def node_share(argv: Sequence[str]) -> NodeShare:
    """The layout of a vLLM launch; a size the shell fills in (``$N``) leaves it unknown (Ray-like)."""
    words = [str(w) for w in argv]
    try:
        layout = parallel_layout(words)
    except ServekitError:
        return NodeShare(ParallelLayout(), ray=True)
    ray = parse_vllm_argv(words, strict=False).get("--distributed-executor-backend") == "ray"
    return NodeShare(layout, ray)


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
        per_replica = share.layout.replica_ranks
        fewer = (f"lower --data-parallel-size-local to {count // per_replica}, or "
                 if share.layout.local_replicas > 1 and share.layout.nnodes == 1 and count >= per_replica else "")
        out.append(Finding(
            "error", CODE,
            f"{name}={value} shows {count} device(s), but {share.describe()} uses {need} on this node",
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
                    f"the container is given {exposed} device(s), but {share.describe()} uses {need} on this node",
                    f"give the container {need} devices (or all of the node's)")]
