"""Plan -> Kubernetes documents, one composition per deploy shape.

* one node: Deployment + Service;
* several nodes: a LeaderWorkerSet of size = nodes (leader = head, workers = follower ranks);
* prefill/decode: one workload per pool (LeaderWorkerSet when the pool spans nodes) + router;
* kv store: a LeaderWorkerSet of ``instances`` groups, Mooncake master/store, router when shared;
and for all of them the Hugging Face cache claim and the warm-cache Job (or init container).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, replace
from typing import Any

from servekit.errors import ServekitError
from servekit.findings import Finding
from servekit.k8s import mooncake
from servekit.k8s.cache import RepoDownload, cache_claim, claim_name, warm_plan
from servekit.k8s.commands import ServerCommand, server_commands
from servekit.k8s.devices import host_device_selectors, typed_profile
from servekit.k8s.options import K8sOptions, base_name, check_options, startup_minutes
from servekit.k8s.router import router_docs
from servekit.k8s.semantic import check_manifests
from servekit.k8s.servers import ServerSetup, group, single_pod
from servekit.k8s.shm import plan_shm_limit
from servekit.k8s.workloads import group_host, service_host
from servekit.records import record
from servekit.synthesis.plan import Plan

POOLS = ("prefill", "decode")


@record
class Manifests:
    """The documents to apply, in apply order, and what a person should know before applying."""

    documents: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    """servekit's own checks of the documents (``servekit.k8s.semantic``); empty when they hold."""

    def kinds(self) -> list[str]:
        return [doc["kind"] for doc in self.documents]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def _dropped_env(plan: Plan, profile: Any) -> frozenset[str]:
    """Host device selections of the plan (``CUDA_VISIBLE_DEVICES=4,5,6,7``): the device plugin
    hands a pod its devices, numbered from 0, so a host index would point past them."""
    selectors = set(host_device_selectors(profile))
    names = set(plan.env_map()) | {k for p in plan.processes for k in p.env_map()}
    return frozenset(names & selectors)


def _setup(plan: Plan, profile: Any, options: K8sOptions, base: str, init: list[dict],
           spec: dict | None) -> ServerSetup:
    paths = {"MOONCAKE_CONFIG_PATH": mooncake.CONFIG_PATH} if spec else {}
    return ServerSetup(
        namespace=options.namespace, base=base, claim=claim_name(base), profile=profile,
        startup_minutes=startup_minutes(options), network_interface=options.network_interface,
        dp_rpc_port=options.dp_rpc_port, device_resource=options.device_resource, tpu_topology=options.tpu_topology,
        shm_limit=plan_shm_limit(plan), dropped_env=_dropped_env(plan, profile), init=tuple(init), paths=paths,
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


def _pd(plan: Plan, options: K8sOptions, setup: ServerSetup, commands) -> list[dict]:
    docs: list[dict] = []
    hosts: dict[str, str] = {}
    for role in POOLS:
        pool_docs, pool_hosts = _pool_docs(setup, commands, role)
        docs += pool_docs
        hosts.update(pool_hosts)
    docs += router_docs(dict(plan.router or ()), hosts, image=str(commands[0].image), port=options.router_port,
                        namespace=options.namespace, base=setup.base)
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


def _servers(plan: Plan, options: K8sOptions, setup: ServerSetup, commands: list[ServerCommand]) -> list[dict]:
    spec = mooncake.parts(dict(plan.passthrough))
    extra = mooncake.mooncake_docs(spec, image=str(commands[0].image), namespace=options.namespace,
                                   base=setup.base) if spec else []
    if plan.deploy_type == "pd_cluster":
        return extra + _pd(plan, options, setup, commands)
    if plan.deploy_type == "kv_store_lb":
        return extra + _kv_store(plan, setup, options, commands)
    if len(commands) > 1:
        return extra + group(setup, commands[0], commands[1:], setup.base, "server")
    return extra + single_pod(setup, commands[0], setup.base, "server")


def _notes(plan: Plan, profile: Any, options: K8sOptions, docs: list[dict], setup_notes: Sequence[str],
           downloads: Sequence[RepoDownload]) -> tuple[str, ...]:
    notes = list(dict.fromkeys(setup_notes))
    for name in sorted(_dropped_env(plan, profile)):
        notes.append(f"{name} of the plan is left out of the pods: the device plugin hands each pod its own "
                     "devices, numbered from 0")
    notes += [f"warm-cache {d.repo_id}: {note}" for d in downloads for note in d.notes]
    if options.warm_cache != "none" and not downloads:
        notes.append("the plan loads no hub repo (local paths only): nothing to warm; the paths must exist in the pods")
    if any(d["kind"] == "LeaderWorkerSet" for d in docs):
        notes.append("needs the LeaderWorkerSet controller (https://github.com/kubernetes-sigs/lws) in the cluster")
    spec = mooncake.parts(dict(plan.passthrough))
    if spec and spec.get("install"):
        notes.append(f"the server image must contain Mooncake: build it FROM {plan.docker.image} with "
                     f"`{spec['install']}` (the server command stays the plan's argv)")
    if plan.docker.source_mount:
        path = plan.docker.source_mount
        notes.append(f"the recipe runs a source checkout at {path} ahead of the image's own packages "
                     f"(model.docker_source; the docker form mounts it and puts it first on PYTHONPATH): the "
                     f"pods mount no host path, so build an image with that checkout installed (--image), or "
                     f"mount a volume holding it at {path} and set PYTHONPATH={path}")
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


def _sized(options: K8sOptions, downloads: Sequence[RepoDownload]) -> K8sOptions:
    """The options with the checkpoint size taken from the listed files when none was given."""
    sizes = [d.total_bytes for d in downloads]
    if options.model_gb is not None or not sizes or None in sizes:
        return options
    return replace(options, model_gb=sum(s or 0 for s in sizes) / 1e9)


def _check_not_ray(plan: Plan) -> None:
    """The Ray form (Ray's head before ``vllm serve``, ``ray start`` on every other node) is not laid
    out as pods here: its pods would need Ray's head and the server in one container, and on TPUs
    a multi-host slice's topology, which the device rules (``servekit.k8s.devices``) do not model."""
    if plan.extra("ray_head_argv"):
        raise ServekitError(
            "no Kubernetes form for this plan: its nodes join through Ray (Ray's head starts before vllm serve, "
            "the other nodes run ray start), which servekit does not lay out as pods",
            fix="run the plan's script or docker form on the machines (plan --format sh [--docker]), "
                "or deploy it on Kubernetes with KubeRay")


def build_manifests(plan: Plan, profile: Any, options: K8sOptions | None = None,
                    downloads: Sequence[RepoDownload] = ()) -> Manifests:
    """Every document for ``plan`` on ``profile`` (a taxonomy profile mapping or typed profile).

    ``downloads`` are the repos the warm step fetches (``servekit.app.k8s_plan.warm_downloads``
    lists them for a plan); with none, no warm step is rendered.
    """
    options = _sized(options or K8sOptions(), downloads)
    check_options(options)
    _check_not_ray(plan)
    profile = typed_profile(profile, plan.selection.hardware)
    base = base_name(options, plan.model_id)
    commands = server_commands(plan, profile)
    warm_docs, init = warm_plan(downloads, options, base, str(commands[0].image))
    setup = _setup(plan, profile, options, base, init, mooncake.parts(dict(plan.passthrough)))
    servers = _servers(plan, options, setup, commands)
    users = [d for d in servers if _mounts_cache(d, claim_name(base))]
    shared = len(users) > 1 or any(d["kind"] == "LeaderWorkerSet" for d in users)
    docs = [cache_claim(base, options, shared), *warm_docs, *servers]
    device_notes = [note for c in commands for note in setup.devices(c).notes]
    findings = check_manifests(docs, plan, profile, options, downloads)
    return Manifests(tuple(docs), _notes(plan, profile, options, docs, device_notes, downloads), tuple(findings))
