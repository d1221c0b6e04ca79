"""A JSON schema for LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), written from its published CRD.

The CRD embeds ``corev1.PodTemplateSpec`` for the leader and worker templates; those are checked
against the Kubernetes schema itself (see ``servekit.k8s.validate``), so this schema covers the
LeaderWorkerSet's own fields and leaves the two templates to that check.
"""

from __future__ import annotations

from typing import Any

LWS_FACTS: dict[str, Any] = {
    "api_version": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "sources": (
        "https://github.com/kubernetes-sigs/lws/blob/024af0845195be26fb4a0847c37d7209849d69da/"
        "api/leaderworkerset/v1/leaderworkerset_types.go",
        "https://github.com/kubernetes-sigs/lws/blob/103a98aa8a6bb5682d96e1f10f3956f791f36e86/"
        "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    ),
    "required_spec": ("leaderWorkerTemplate",),
    "required_template": ("workerTemplate",),
    "startup_policies": ("LeaderCreated", "LeaderReady"),
    "restart_policies": ("Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"),
    "rollout_types": ("RollingUpdate",),
    "subgroup_policy_types": ("LeaderWorker", "LeaderExcluded"),
    "subdomain_policies": ("Shared", "UniquePerReplica"),
    "pod_env": ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"),
    "labels": ("leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/worker-index",
               "leaderworkerset.sigs.k8s.io/group-index"),
}
"""Facts of the v1 API: enums, required fields, and the env every pod of a group receives."""

_INT32 = {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}
_INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
_POD_TEMPLATE = {"type": "object", "required": ["spec"], "properties": {
    "metadata": {"type": "object"}, "spec": {"type": "object", "required": ["containers"]}}}


def _enum(key: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(LWS_FACTS[key])}


def _template() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(LWS_FACTS["required_template"]),
        "properties": {
            "leaderTemplate": _POD_TEMPLATE,
            "workerTemplate": _POD_TEMPLATE,
            "size": {**_INT32, "minimum": 1},
            "restartPolicy": _enum("restart_policies"),
            "subGroupPolicy": {"type": "object", "additionalProperties": False, "properties": {
                "subGroupPolicyType": _enum("subgroup_policy_types"), "subGroupSize": {**_INT32, "minimum": 1}}},
            "volumeClaimTemplates": {"type": "array", "items": {"type": "object"}},
            "persistentVolumeClaimRetentionPolicy": {"type": "object"},
        },
    }


def _spec() -> dict[str, Any]:
    rolling = {"type": "object", "additionalProperties": False, "properties": {
        "partition": _INT32, "maxUnavailable": _INT_OR_STRING, "maxSurge": _INT_OR_STRING}}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(LWS_FACTS["required_spec"]),
        "properties": {
            "replicas": _INT32,
            "leaderWorkerTemplate": _template(),
            "rolloutStrategy": {"type": "object", "additionalProperties": False, "required": ["type"],
                                "properties": {"type": _enum("rollout_types"), "rollingUpdateConfiguration": rolling}},
            "startupPolicy": _enum("startup_policies"),
            "networkConfig": {"type": "object", "additionalProperties": False, "required": ["subdomainPolicy"],
                              "properties": {"subdomainPolicy": _enum("subdomain_policies")}},
        },
    }


def lws_schema() -> dict[str, Any]:
    """The whole object: apiVersion/kind fixed, metadata with a name, and the spec above."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": LWS_FACTS["api_version"]},
            "kind": {"const": LWS_FACTS["kind"]},
            "metadata": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63},
                "namespace": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "spec": _spec(),
        },
    }
