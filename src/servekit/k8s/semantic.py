"""servekit's own checks of a plan's Kubernetes documents: what a schema cannot see.

* devices: each server container requests exactly the devices its process drives (TP x PP per
  replica, DP-local x TP for data-parallel ranks, the world split over ``--nnodes``), under the
  hardware's device-plugin resource, and none on CPU hardware; TPU pods select their accelerator
  and a topology with enough chips;
* probes: the serving container has startup, readiness and liveness probes on the engine's
  health path and the server's port, the startup window no shorter than the start-up budget;
* shared memory: ``/dev/shm`` is a memory ``emptyDir`` mounted into the server, capped at the
  plan's size where it has one;
* no host device selection (``CUDA_VISIBLE_DEVICES=4,5,6,7``) reaches a pod;
* warm: no container installs or runs servekit; the warm step downloads exactly the plan's
  files, and the servers wait for it.

Each problem is a ``Finding`` (error) naming the document and the fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from servekit.engines.common.command_line import option_value
from servekit.findings import Finding
from servekit.k8s.cache import DOWNLOAD_SCRIPT, PYTHON, RepoDownload
from servekit.k8s.commands import health_path
from servekit.k8s.devices import device_resource, host_device_selectors, process_layout, typed_profile
from servekit.k8s.options import K8sOptions, startup_minutes
from servekit.k8s.pod import SHM_VOLUME
from servekit.k8s.shm import plan_shm_limit
from servekit.k8s.workloads import COMPONENT_LABEL
from servekit.hardware.device_plugins import TPU_ACCELERATOR_LABEL, TPU_TOPOLOGY_LABEL
from servekit.records import record
from servekit.synthesis.plan import Plan, Process

SHM_PATH = "/dev/shm"
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
WARM_CONTAINER = "warm-cache"
SERVER_CONTAINER = "server"
POOLS = ("prefill", "decode")
_SERVEKIT_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|pipx)\s+install\b[^;&|\n]*\bservekit\b")
_SERVEKIT_RUN = re.compile(r"(?:^|[\s;&|(])(?:\S*/)?servekit\s")


@record
class PodTemplate:
    """One pod template of a workload: ``only`` (Deployment or Job), ``leader`` or ``worker``."""

    where: str
    component: str
    role: str
    spec: Mapping[str, Any]


def _templates(docs: Sequence[Mapping[str, Any]]) -> Iterator[PodTemplate]:
    for doc in docs:
        where = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        spec = doc.get("spec") or {}
        lwt = spec.get("leaderWorkerTemplate")
        pairs = [("leader", lwt.get("leaderTemplate") or lwt.get("workerTemplate")), ("worker", lwt.get("workerTemplate"))
                 ] if lwt else [("only", spec.get("template"))]
        for role, template in pairs:
            if isinstance(template, Mapping):
                labels = (template.get("metadata") or {}).get("labels") or {}
                yield PodTemplate(f"{where} ({role})" if lwt else where, str(labels.get(COMPONENT_LABEL, "")), role,
                                  template.get("spec") or {})


def _containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]


def _argv(container: Mapping[str, Any]) -> list[str]:
    return [str(t) for t in [*(container.get("command") or ()), *(container.get("args") or ())]]


def _server(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((c for c in spec.get("containers") or () if c.get("name") == SERVER_CONTAINER), None)


def component_of(plan: Plan, process: Process) -> str:
    """The workload a process runs in: its prefill/decode pool, else the server."""
    pool = process.role.removesuffix("_node")
    return pool if plan.deploy_type == "pd_cluster" and pool in POOLS else "server"


def _processes(plan: Plan, template: PodTemplate) -> list[Process]:
    """The plan processes a server pod template runs: a group's first process leads, the rest work."""
    group = [p for p in plan.processes if component_of(plan, p) == template.component]
    if template.role == "worker":
        return group[1:] or group[:1]
    return group[:1]


def _error(code: str, where: str, message: str, fix: str) -> Finding:
    return Finding("error", code, f"{where}: {message}", fix, where)


def _device_findings(plan: Plan, profile: Any, options: K8sOptions, t: PodTemplate,
                     server: Mapping[str, Any], processes: list[Process]) -> list[Finding]:
    layouts = {process_layout(p) for p in processes}
    counts = {layout.devices_per_node for layout in layouts}
    if len(counts) != 1:
        return [_error("k8s-devices", t.where, f"its processes drive different numbers of devices {sorted(counts)}",
                       "one pod template serves processes of one size; use fewer nodes or a single-node strategy")]
    count, layout = counts.pop(), next(iter(layouts))
    resource = device_resource(profile, options.device_resource)
    want = {resource: count} if resource and count > 0 else {}
    resources = server.get("resources") or {}
    limits = {k: v for k, v in (resources.get("limits") or {}).items() if "/" in k}
    requests = {k: v for k, v in (resources.get("requests") or {}).items() if "/" in k}
    out: list[Finding] = []
    if limits != want or requests != want:
        asked = ", ".join(f"{k}: {v}" for k, v in limits.items()) or "no device"
        need = f"{resource}: {count}" if want else "no device"
        out.append(_error("k8s-devices", t.where, f"the server asks {asked} but its process drives {count} "
                          f"device(s) ({layout.describe()})", f"request {need} (limits and requests)"))
    plugin = typed_profile(profile).device_plugin
    if want and plugin is not None and plugin.tpu is not None:
        out += _tpu_findings(t, plugin.tpu, count, options)
    return out


def _tpu_findings(t: PodTemplate, tpu: Any, count: int, options: K8sOptions) -> list[Finding]:
    selector = t.spec.get("nodeSelector") or {}
    topology = selector.get(TPU_TOPOLOGY_LABEL)
    chips = dict((topo, n) for n, topo in tpu.topologies).get(topology)
    fits = topology == options.tpu_topology if options.tpu_topology else chips is not None and chips >= count
    if selector.get(TPU_ACCELERATOR_LABEL) != tpu.accelerator or not fits:
        return [_error("k8s-tpu-selector", t.where, f"the node selector {dict(selector)} does not pick a "
                       f"{tpu.accelerator} host with {count} chip(s)",
                       f"select {TPU_ACCELERATOR_LABEL}={tpu.accelerator} and a topology of at least {count} chips")]
    return []


def _port(server: Mapping[str, Any]) -> int | None:
    given = option_value(_argv(server), "--port")
    if given is not None and given.isdigit():
        return int(given)
    return next((p.get("containerPort") for p in server.get("ports") or () if p.get("name") == "http"), None)


def _probe_findings(plan: Plan, options: K8sOptions, t: PodTemplate, server: Mapping[str, Any]) -> list[Finding]:
    path, port = health_path(plan.selection.engine), _port(server)
    out = []
    for name in PROBES:
        get = (server.get(name) or {}).get("httpGet") or {}
        if get.get("path") != path or get.get("port") not in (port, "http"):
            out.append(_error("k8s-probes", t.where, f"the server has no {name} on GET {path} port {port}",
                              f"add a {name} with httpGet path {path} and the server's port"))
    startup = server.get("startupProbe") or {}
    window = startup.get("failureThreshold", 3) * startup.get("periodSeconds", 10) + startup.get("initialDelaySeconds", 0)
    budget = startup_minutes(options) * 60
    if startup and window < budget:
        out.append(_error("k8s-probes", t.where, f"the startup probe gives up after {window} s, before the "
                          f"{budget} s a model load may take", "raise the startup probe's failureThreshold"))
    return out


def _shm_findings(plan: Plan, t: PodTemplate, server: Mapping[str, Any]) -> list[Finding]:
    mounted = {m.get("name") for m in server.get("volumeMounts") or () if m.get("mountPath") == SHM_PATH}
    volume = next((v for v in t.spec.get("volumes") or () if v.get("name") in mounted), None)
    empty_dir = (volume or {}).get("emptyDir") or {}
    limit = plan_shm_limit(plan)
    if empty_dir.get("medium") != "Memory" or empty_dir.get("sizeLimit") != limit:
        size = f" with sizeLimit {limit}" if limit else ""
        return [_error("k8s-shm", t.where, f"{SHM_PATH} is not a memory emptyDir{size} mounted into the server",
                       f"mount an emptyDir {{medium: Memory{', sizeLimit: ' + limit if limit else ''}}} at {SHM_PATH} "
                       f"(volume {SHM_VOLUME})")]
    return []


def _env_findings(profile: Any, t: PodTemplate, server: Mapping[str, Any]) -> list[Finding]:
    selectors = set(host_device_selectors(profile))
    passed = sorted(e.get("name") for e in server.get("env") or () if e.get("name") in selectors)
    return [_error("k8s-host-devices", t.where, f"{name} picks devices by host index, but the pod sees only its own "
                   "devices, numbered from 0", f"leave {name} out of the pod") for name in passed]


def _servekit_findings(t: PodTemplate) -> list[Finding]:
    out = []
    for container in _containers(t.spec):
        text = " ".join(_argv(container))
        if _SERVEKIT_INSTALL.search(text) or _SERVEKIT_RUN.search(text + " "):
            out.append(_error("k8s-servekit-package", t.where, f"container {container.get('name')} needs servekit "
                              "in the cluster, which no package index serves", "download with huggingface_hub in the "
                              "engine image (the warm step servekit renders)"))
    return out


def _warm_spec(container: Mapping[str, Any]) -> tuple[Any, str | None]:
    """(the repos a warm container downloads, its marker) or (None, None) when it is not the download step."""
    argv = _argv(container)
    if argv[:3] != [PYTHON, "-c", DOWNLOAD_SCRIPT] or len(argv) not in (4, 5):
        return None, None
    try:
        return json.loads(argv[3]), (argv[4] if len(argv) == 5 else None)
    except ValueError:
        return None, None


def _warm_findings(templates: list[PodTemplate], servers: list[PodTemplate], options: K8sOptions,
                   downloads: Sequence[RepoDownload]) -> list[Finding]:
    if options.warm_cache == "none" or not downloads:
        return []
    want = [d.spec() for d in downloads]
    steps = [(t, c) for t in templates for c in _containers(t.spec) if c.get("name") == WARM_CONTAINER]
    out = []
    for t, container in steps:
        spec, _ = _warm_spec(container)
        if spec != want:
            out.append(_error("k8s-warm", t.where, "the warm step does not download exactly the plan's files",
                              "run the download step servekit renders for this plan"))
    jobs = [(t, c) for t, c in steps if t.component == WARM_CONTAINER]
    if options.warm_cache == "job":
        markers = {_warm_spec(c)[1] for _, c in jobs}
        if len(jobs) != 1 or None in markers:
            out.append(_error("k8s-warm", "warm-cache Job", f"{len(jobs)} warm-cache Job(s) with a marker, not one",
                              "render one Job that downloads the plan's files and writes its marker"))
        for t in servers:
            waits = " ".join(" ".join(_argv(c)) for c in t.spec.get("initContainers") or ())
            if not markers or not all(m and m in waits for m in markers):
                out.append(_error("k8s-warm", t.where, "the server does not wait for the warm-cache Job",
                                  "add an init container that waits for the Job's marker"))
    else:
        for t in servers:
            inits = [c for c in t.spec.get("initContainers") or () if c.get("name") == WARM_CONTAINER]
            if len(inits) != 1:
                out.append(_error("k8s-warm", t.where, "the server pod does not warm the cache first",
                                  "add the download step as its first init container"))
    return out


def check_manifests(docs: Sequence[Mapping[str, Any]], plan: Plan, profile: Any, options: K8sOptions,
                    downloads: Sequence[RepoDownload] = ()) -> list[Finding]:
    """Every problem servekit's own checks find in ``docs`` (empty when they hold)."""
    profile = typed_profile(profile, plan.selection.hardware)
    templates = list(_templates(docs))
    components = {component_of(plan, p) for p in plan.processes}
    servers = [t for t in templates if t.component in components]
    out: list[Finding] = []
    covered = {id(p) for t in servers for p in _processes(plan, t)}
    missing = [f"{p.role} {p.rank}" for p in plan.processes if id(p) not in covered]
    if missing:
        out.append(_error("k8s-processes", "documents", f"no pod runs {', '.join(missing)}",
                          "render one workload per server process group"))
    for t in servers:
        server = _server(t.spec)
        if server is None:
            out.append(_error("k8s-processes", t.where, "the pod has no server container", "render the server"))
            continue
        out += _device_findings(plan, profile, options, t, server, _processes(plan, t))
        out += _shm_findings(plan, t, server) + _env_findings(profile, t, server)
        if t.role != "worker":
            out += _probe_findings(plan, options, t, server)
    for t in templates:
        out += _servekit_findings(t)
    return out + _warm_findings(templates, servers, options, downloads)
