"""Containers and pod specs: the server's command, env, devices, probes and volumes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from servekit.k8s.devices import DeviceRequest
from servekit.k8s.options import HF_CACHE_PATH
from servekit.records import record
from servekit.synthesis.images import in_image_words

CACHE_VOLUME = "hf-cache"
SHM_VOLUME = "dshm"
HF_TOKEN_SECRET = "hf-token"
"""Optional Secret (key ``token``) handed to every container as HF_TOKEN, for gated models."""
PROBE_PERIOD_S = 10


@record
class Probes:
    port: int
    path: str
    startup_minutes: int


def split_argv(argv: Sequence[str]) -> dict[str, list[str]]:
    """``command`` + ``args`` that together are exactly ``argv`` (a shell form keeps ``sh -c``
    as the command and the script as its one arg)."""
    if len(argv) == 3 and tuple(argv[:2]) == ("/bin/sh", "-c"):
        return {"command": list(argv[:2]), "args": [argv[2]]}
    return {"command": [argv[0]], "args": list(argv[1:])}


def _http(path: str, port: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port}}


def probe_block(probes: Probes) -> dict[str, Any]:
    """Startup probe with the whole load budget; readiness and liveness once it has passed."""
    return {
        "startupProbe": {**_http(probes.path, probes.port), "periodSeconds": PROBE_PERIOD_S, "timeoutSeconds": 5,
                         "failureThreshold": max(1, probes.startup_minutes * 60 // PROBE_PERIOD_S)},
        "readinessProbe": {**_http(probes.path, probes.port), "periodSeconds": PROBE_PERIOD_S, "timeoutSeconds": 5,
                           "failureThreshold": 3},
        "livenessProbe": {**_http(probes.path, probes.port), "periodSeconds": 30, "timeoutSeconds": 10,
                          "failureThreshold": 5},
    }


def common_env() -> list[dict[str, Any]]:
    """HF_HOME on the cache volume and the optional Hugging Face token."""
    return [
        {"name": "HF_HOME", "value": HF_CACHE_PATH},
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": HF_TOKEN_SECRET, "key": "token",
                                                            "optional": True}}},
    ]


def with_common_env(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = {e["name"] for e in entries}
    return entries + [e for e in common_env() if e["name"] not in names]


def cache_mounts() -> list[dict[str, Any]]:
    return [{"name": CACHE_VOLUME, "mountPath": HF_CACHE_PATH}, {"name": SHM_VOLUME, "mountPath": "/dev/shm"}]


def container(name: str, image: str, argv: Sequence[str], env: list[dict[str, Any]], *,
              devices: DeviceRequest | None = None, probes: Probes | None = None,
              extra_mounts: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """One container: exact argv (its paths into vLLM's examples where the image keeps them,
    ``servekit.synthesis.images.in_image_words``), env, device limits (= requests), the cache and
    /dev/shm."""
    out: dict[str, Any] = {"name": name, "image": image, **split_argv(list(in_image_words(image, argv))), "env": env}
    if probes is not None:
        out["ports"] = [{"name": "http", "containerPort": probes.port, "protocol": "TCP"}]
        out.update(probe_block(probes))
    if devices is not None and devices.resources:
        out["resources"] = {"limits": dict(devices.resources), "requests": dict(devices.resources)}
    out["volumeMounts"] = [*cache_mounts(), *(dict(m) for m in extra_mounts)]
    return out


def shm_volume(size_limit: str | None = None) -> dict[str, Any]:
    """A memory-backed /dev/shm (NCCL and the engines' worker processes use shared memory),
    capped at the plan's shared-memory size when it has one."""
    empty_dir: dict[str, Any] = {"medium": "Memory"}
    if size_limit:
        empty_dir["sizeLimit"] = size_limit
    return {"name": SHM_VOLUME, "emptyDir": empty_dir}


def volumes(claim: str, extra: Sequence[Mapping[str, Any]] = (), shm_limit: str | None = None) -> list[dict[str, Any]]:
    """The cache claim, /dev/shm, and any extra volumes."""
    return [
        {"name": CACHE_VOLUME, "persistentVolumeClaim": {"claimName": claim}},
        shm_volume(shm_limit),
        *(dict(v) for v in extra),
    ]


def pod_spec(containers: list[dict[str, Any]], claim: str, *, devices: DeviceRequest | None = None,
             init: Sequence[Mapping[str, Any]] = (), extra_volumes: Sequence[Mapping[str, Any]] = (),
             restart: str | None = None, shm_limit: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if init:
        spec["initContainers"] = [dict(c) for c in init]
    spec["containers"] = containers
    spec["volumes"] = volumes(claim, extra_volumes, shm_limit)
    if devices is not None and devices.node_selector:
        spec["nodeSelector"] = dict(devices.node_selector)
    if restart:
        spec["restartPolicy"] = restart
    return spec
