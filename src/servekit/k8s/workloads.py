"""Kubernetes objects as plain dicts: Deployment, Service, claim, Job, ConfigMap, LeaderWorkerSet."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LWS_API = "leaderworkerset.x-k8s.io/v1"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
LWS_WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
NAME_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
MANAGED_LABEL = "app.kubernetes.io/managed-by"


def labels(base: str, component: str) -> dict[str, str]:
    return {NAME_LABEL: base, COMPONENT_LABEL: component, MANAGED_LABEL: "servekit"}


def selector_labels(base: str, component: str) -> dict[str, str]:
    return {NAME_LABEL: base, COMPONENT_LABEL: component}


def metadata(name: str, namespace: str, base: str, component: str,
             annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels(base, component)}
    if annotations:
        out["annotations"] = dict(annotations)
    return out


def deployment(meta: dict[str, Any], pod: dict[str, Any], *, replicas: int = 1) -> dict[str, Any]:
    """A Deployment that replaces pods all at once: two servers would not fit one node's devices."""
    select = {k: v for k, v in meta["labels"].items() if k != MANAGED_LABEL}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
        "spec": {"replicas": replicas, "strategy": {"type": "Recreate"}, "selector": {"matchLabels": select},
                 "template": {"metadata": {"labels": dict(meta["labels"])}, "spec": pod}},
    }


def service(meta: dict[str, Any], selector: Mapping[str, str], port: int, target: int | str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Service", "metadata": meta,
        "spec": {"type": "ClusterIP", "selector": dict(selector),
                 "ports": [{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}]},
    }


def claim(meta: dict[str, Any], size: str, access_mode: str, storage_class: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": [access_mode], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def job(meta: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
        "spec": {"backoffLimit": 3, "template": {"metadata": {"labels": dict(meta["labels"])}, "spec": pod}},
    }


def config_map(meta: dict[str, Any], data: Mapping[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)}


def leader_worker_set(meta: dict[str, Any], leader: dict[str, Any], worker: dict[str, Any], *,
                      size: int, replicas: int = 1) -> dict[str, Any]:
    """One group per replica: the leader pod plus ``size - 1`` workers, recreated together."""
    pod_labels = dict(meta["labels"])
    return {
        "apiVersion": LWS_API, "kind": "LeaderWorkerSet", "metadata": meta,
        "spec": {
            "replicas": replicas,
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": size,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {"metadata": {"labels": {**pod_labels, "role": "leader"}}, "spec": leader},
                "workerTemplate": {"metadata": {"labels": {**pod_labels, "role": "worker"}}, "spec": worker},
            },
        },
    }


def leader_selector(lws_name: str) -> dict[str, str]:
    """Pods the LeaderWorkerSet controller labels as the leaders of its groups."""
    return {LWS_NAME_LABEL: lws_name, LWS_WORKER_INDEX_LABEL: "0"}


def group_host(lws_name: str, namespace: str, group: int, node: int) -> str:
    """DNS name of one pod of a group (node 1 = leader), through the set's headless Service."""
    pod = f"{lws_name}-{group}" if node == 1 else f"{lws_name}-{group}-{node - 1}"
    return f"{pod}.{lws_name}.{namespace}"


def service_host(name: str, namespace: str) -> str:
    return f"{name}.{namespace}"
