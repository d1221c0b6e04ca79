"""Server workloads: one pod (Deployment) or one LeaderWorkerSet group per replica."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from servekit.errors import ServekitError
from servekit.k8s.commands import ServerCommand
from servekit.k8s.devices import DeviceRequest, device_request, process_devices
from servekit.k8s.placeholders import DP_RPC_PORT, PLACEHOLDER, Scope, bind_argv, bind_env, worker_template
from servekit.k8s.pod import Probes, cache_mounts, container, pod_spec, with_common_env
from servekit.k8s.workloads import deployment, leader_selector, leader_worker_set, metadata, selector_labels, service
from servekit.records import record


@record
class ServerSetup:
    """What every server pod of one deployment shares."""

    namespace: str
    base: str
    claim: str
    profile: Any
    """The hardware profile (typed, or its taxonomy mapping): which device plugin serves the pods."""
    startup_minutes: int
    network_interface: str
    dp_rpc_port: int
    device_resource: str | None = None
    tpu_topology: str | None = None
    shm_limit: str | None = None
    dropped_env: frozenset[str] = frozenset()
    """Variables of the plan left out of server containers (host device selections)."""
    init: tuple[Mapping[str, Any], ...] = ()
    paths: Mapping[str, str] = field(default_factory=dict)
    mounts: tuple[Mapping[str, Any], ...] = ()
    volumes: tuple[Mapping[str, Any], ...] = ()

    def devices(self, command: ServerCommand) -> DeviceRequest:
        """The devices this command's process drives on its node, under the plugin's resource."""
        return device_request(self.profile, process_devices(command.process), resource=self.device_resource,
                              tpu_topology=self.tpu_topology)


def scope(setup: ServerSetup, command: ServerCommand, node: int, in_group: bool) -> Scope:
    names = {m.group(1) for t in command.argv for m in PLACEHOLDER.finditer(t) if DP_RPC_PORT.match(m.group(1))}
    return Scope(node=node, in_group=in_group, network_interface=setup.network_interface,
                 ports={n: str(setup.dp_rpc_port) for n in sorted(names)}, paths=setup.paths)


def _init(setup: ServerSetup, command: ServerCommand) -> list[Mapping[str, Any]]:
    """Warm-cache (or wait for it), then the engine's ahead-of-time compile steps."""
    steps = [{"name": f"precompile-{i}", "image": command.image, "command": ["/bin/sh", "-c"], "args": [step],
              "env": with_common_env([]), "volumeMounts": cache_mounts()}
             for i, step in enumerate(command.precompile)]
    return [*setup.init, *steps]


def _env(setup: ServerSetup, command: ServerCommand) -> dict[str, Any]:
    return {k: v for k, v in command.env.items() if k not in setup.dropped_env}


def server_pod(setup: ServerSetup, command: ServerCommand, argv: Sequence[str], sc: Scope,
               probes: bool = True) -> dict[str, Any]:
    env = with_common_env(bind_env(_env(setup, command), sc))
    probe = Probes(command.port, command.health_path, setup.startup_minutes) if probes else None
    devices = setup.devices(command)
    main = container("server", str(command.image), argv, env, devices=devices, probes=probe,
                     extra_mounts=setup.mounts)
    return pod_spec([main], setup.claim, devices=devices, init=_init(setup, command),
                    extra_volumes=setup.volumes, shm_limit=setup.shm_limit)


def single_pod(setup: ServerSetup, command: ServerCommand, name: str, component: str,
               replicas: int = 1) -> list[dict[str, Any]]:
    """Deployment + Service for a server that fits one node."""
    sc = scope(setup, command, 1, False)
    pod = server_pod(setup, command, bind_argv(command.argv, sc), sc)
    meta = metadata(name, setup.namespace, setup.base, component)
    svc = service(metadata(name, setup.namespace, setup.base, component),
                  selector_labels(setup.base, component), command.port, "http")
    return [deployment(meta, pod, replicas=replicas), svc]


def _worker_pod(setup: ServerSetup, workers: Sequence[ServerCommand]) -> dict[str, Any]:
    scopes = [scope(setup, w, w.process.rank + 1, True) for w in workers]
    argvs = [bind_argv(w.argv, s) for w, s in zip(workers, scopes)]
    tokens = worker_template(argvs, [w.process.rank for w in workers])
    envs = [bind_env(_env(setup, w), s) for w, s in zip(workers, scopes)]
    if any(env != envs[0] for env in envs):
        raise ServekitError("worker ranks need different environments; one LeaderWorkerSet template cannot hold them",
                            fix="use a single-node strategy or fewer nodes")
    if len({process_devices(w.process) for w in workers}) > 1:
        raise ServekitError("worker ranks drive different numbers of devices; one LeaderWorkerSet template cannot "
                            "request them all", fix="use a single-node strategy or fewer nodes")
    return server_pod(setup, workers[0], tokens, scopes[0], probes=False)


def group(setup: ServerSetup, head: ServerCommand, workers: Sequence[ServerCommand], name: str,
          component: str, replicas: int = 1) -> list[dict[str, Any]]:
    """LeaderWorkerSet (size = 1 + workers) + a Service on the group leaders."""
    sc = scope(setup, head, 1, True)
    leader = server_pod(setup, head, bind_argv(head.argv, sc), sc)
    worker = _worker_pod(setup, workers) if workers else leader
    meta = metadata(name, setup.namespace, setup.base, component)
    lws = leader_worker_set(meta, leader, worker, size=1 + len(workers), replicas=replicas)
    svc = service(metadata(f"{name}-api", setup.namespace, setup.base, component), leader_selector(name),
                  head.port, "http")
    return [lws, svc]
