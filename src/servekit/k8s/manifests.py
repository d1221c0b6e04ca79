"""Plan -> Kubernetes documents, one composition per deploy shape.

* one node: Deployment + Service;
* several nodes: a LeaderWorkerSet of size = nodes (leader = head, workers = follower ranks);
* prefill/decode: one workload per pool (LeaderWorkerSet when the pool spans nodes) + router;
* kv store: a LeaderWorkerSet of ``instances`` groups, Mooncake master/store, router when shared;
and for all of them the Hugging Face cache claim and the warm-cache Job (or init container).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servekit.k8s import mooncake
from servekit.k8s.cache import cache_claim, claim_name, warm_plan
from servekit.k8s.commands import ServerCommand, server_commands
from servekit.k8s.devices import device_count, device_request
from servekit.k8s.options import K8sOptions, base_name, check_options, startup_minutes
from servekit.k8s.router import router_docs
from servekit.k8s.servers import ServerSetup, group, single_pod
from servekit.k8s.workloads import group_host, service_host
from servekit.synthesis.plan import Plan

POOLS = ("prefill", "decode")


@dataclass(frozen=True)
class Manifests:
    """The documents to apply, in apply order, and what a person should know before applying."""

    documents: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def kinds(self) -> list[str]:
        return [doc["kind"] for doc in self.documents]


def _setup(plan: Plan, profile: Any, options: K8sOptions, base: str, count: int, init: list[dict],
           spec: dict | None) -> ServerSetup:
    devices = device_request(profile, plan.selection.hardware, count, resource=options.device_resource,
                             tpu_topology=options.tpu_topology)
    paths = {"MOONCAKE_CONFIG_PATH": mooncake.CONFIG_PATH} if spec else {}
    return ServerSetup(
        namespace=options.namespace, base=base, claim=claim_name(base), devices=devices,
        startup_minutes=startup_minutes(options), network_interface=options.network_interface,
        dp_rpc_port=options.dp_rpc_port, init=tuple(init), paths=paths,
        mounts=(mooncake.config_mount(),) if spec else (), volumes=(mooncake.config_volume(base),) if spec else ())


def _by_role(commands: list[ServerCommand], role: str) -> list[ServerCommand]:
    return [c for c in commands if c.process.role == role]


def _pool_docs(setup: ServerSetup, commands: list[ServerCommand], role: str) -> tuple[list[dict], dict[str, str]]:
    """One pool's workload and the host of each of its nodes (``PREFILL_NODE_1`` ...)."""
    head, followers = _by_role(commands, role)[0], _by_role(commands, f"{role}_node")
    name = f"{setup.base}-{role}"
    key = role.upper()
    if not followers:
        return single_pod(setup, head, name, role), {f"{key}_NODE_1": service_host(name, setup.namespace)}
    hosts = {f"{key}_NODE_{n}": group_host(name, setup.namespace, 0, n) for n in range(1, len(followers) + 2)}
    return group(setup, head, followers, name, role), hosts


def _pd(plan: Plan, options: K8sOptions, profile: Any, base: str, commands, init, spec) -> list[dict]:
    docs: list[dict] = []
    hosts: dict[str, str] = {}
    for role in POOLS:
        meta = dict(_by_role(commands, role)[0].process.meta)
        count = meta.get("poolGpus") if meta.get("nodes") == 0 else device_count(profile)
        pool_docs, pool_hosts = _pool_docs(_setup(plan, profile, options, base, int(count or 0), init, spec),
                                           commands, role)
        docs += pool_docs
        hosts.update(pool_hosts)
    docs += router_docs(dict(plan.router or ()), hosts, image=str(commands[0].image), port=options.router_port,
                        namespace=options.namespace, base=base)
    return docs


def _kv_store(plan: Plan, setup: ServerSetup, options: K8sOptions, commands) -> list[dict]:
    instances = int(plan.extra("instances") or 1)
    docs = group(setup, commands[0], commands[1:], setup.base, "server", replicas=instances)
    if plan.router is not None:
        router = dict(plan.router)
        hosts = {f"VLLM_INSTANCE_{i + 1}": group_host(setup.base, setup.namespace, i, 1) for i in range(instances)}
        docs += router_docs(router, hosts, image=str(commands[0].image), port=int(router.get("port") or 30080),
                            namespace=options.namespace, base=setup.base)
    return docs


def _servers(plan: Plan, profile: Any, options: K8sOptions, base: str, init: list[dict]) -> list[dict]:
    commands = server_commands(plan, profile)
    spec = mooncake.parts(dict(plan.passthrough))
    extra = mooncake.mooncake_docs(spec, image=str(commands[0].image), namespace=options.namespace,
                                   base=base) if spec else []
    if plan.deploy_type == "pd_cluster":
        return extra + _pd(plan, options, profile, base, commands, init, spec)
    setup = _setup(plan, profile, options, base, device_count(profile), init, spec)
    if plan.deploy_type == "kv_store_lb":
        return extra + _kv_store(plan, setup, options, commands)
    if len(commands) > 1:
        return extra + group(setup, commands[0], commands[1:], base, "server")
    return extra + single_pod(setup, commands[0], base, "server")


def _notes(plan: Plan, profile: Any, options: K8sOptions, docs: list[dict]) -> tuple[str, ...]:
    notes = list(device_request(profile, plan.selection.hardware, device_count(profile),
                                resource=options.device_resource, tpu_topology=options.tpu_topology).notes)
    if any(d["kind"] == "LeaderWorkerSet" for d in docs):
        notes.append("needs the LeaderWorkerSet controller (https://github.com/kubernetes-sigs/lws) in the cluster")
    spec = mooncake.parts(dict(plan.passthrough))
    if spec and spec.get("install"):
        notes.append(f"the server image must contain Mooncake: build it FROM {plan.docker.image} with "
                     f"`{spec['install']}` (the server command stays the plan's argv)")
    claim = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")
    if "ReadWriteMany" in claim["spec"]["accessModes"]:
        notes.append("the cache claim is ReadWriteMany: pick a storage class that supports it (--storage-class)")
    return tuple(notes)


def _mounts_cache(doc: dict[str, Any], claim: str) -> bool:
    """Whether a workload's pods mount the cache claim (a LeaderWorkerSet's group is several pods)."""
    spec = doc.get("spec") or {}
    templates = [spec.get("template")] + list((spec.get("leaderWorkerTemplate") or {}).values())
    return any(isinstance(t, dict) and any((v.get("persistentVolumeClaim") or {}).get("claimName") == claim
                                           for v in (t.get("spec") or {}).get("volumes") or ())
               for t in templates)


def build_manifests(plan: Plan, profile: Any, options: K8sOptions | None = None) -> Manifests:
    """Every document for ``plan`` on ``profile`` (a taxonomy profile mapping or typed profile)."""
    options = options or K8sOptions()
    check_options(options)
    base = base_name(options, plan.model_id)
    warm_docs, init = warm_plan(plan, options, base)
    servers = _servers(plan, profile, options, base, init)
    users = [d for d in servers if _mounts_cache(d, claim_name(base))]
    shared = len(users) > 1 or any(d["kind"] == "LeaderWorkerSet" for d in users)
    docs = [cache_claim(base, options, shared), *warm_docs, *servers]
    return Manifests(tuple(docs), _notes(plan, profile, options, docs))
