"""What a user chooses about the Kubernetes form of a plan: names, storage, start-up budget."""

from __future__ import annotations

import math
import re

from servekit.errors import SelectionError
from servekit.records import record

WARM_MODES = ("job", "init", "none")
HF_CACHE_PATH = "/root/.cache/huggingface"
"""Where the Hugging Face cache volume is mounted (``HF_HOME``); the vLLM images run as root."""

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME = 40
"""Room left for the suffixes controllers add (``-prefill``, ``-0-12``, pod hashes)."""


@record
class K8sOptions:
    """Choices for ``--format k8s``; every field has a default that works on a plain cluster."""

    namespace: str = "default"
    name: str | None = None
    """Base name of every object (default: derived from the model id)."""
    storage_class: str | None = None
    """StorageClass of the cache claim (default: the cluster's default class)."""
    cache_size: str = "500Gi"
    access_mode: str | None = None
    """Access mode of the cache claim (default: ReadWriteMany when several pods share it)."""
    warm_cache: str = "job"
    """``job``: a Job fills the cache and the server waits for it; ``init``: an init container
    of the server pod fills it; ``none``: the server downloads on first start."""
    startup_minutes: int | None = None
    """Start-up probe budget (default: scaled by ``model_gb``, at least 60 minutes)."""
    model_gb: float | None = None
    """Checkpoint size when known (default: the size of the files the warm step lists, when
    servekit listed them); scales the start-up budget."""
    network_interface: str = "eth0"
    """Pod network interface bound to ``$IFACE_NAME`` (GLOO/NCCL socket names)."""
    dp_rpc_port: int = 29550
    """Port bound to ``$PREFILL_DP_RPC_PORT`` / ``$DECODE_DP_RPC_PORT``."""
    router_port: int = 8000
    warm_image: str | None = None
    """Image of the warm-cache step (default: the server's engine image); it needs ``python3``
    with ``huggingface_hub``."""
    tpu_topology: str | None = None
    device_resource: str | None = None
    """Override the device-plugin resource name (e.g. ``huawei.com/Ascend910B``)."""


def check_options(options: K8sOptions) -> None:
    """Reject options the API server would reject later, with the fix."""
    if options.warm_cache not in WARM_MODES:
        raise SelectionError(f"unknown warm-cache mode {options.warm_cache!r}",
                             fix=f"use one of: {', '.join(WARM_MODES)}")
    for label, value in (("--namespace", options.namespace), ("--name", options.name)):
        if value is not None and (not _DNS_LABEL.match(value) or len(value) > 63):
            raise SelectionError(f"{label} {value!r} is not a Kubernetes name",
                                 fix="use lower-case letters, digits and '-', starting and ending alphanumeric")
    if options.name is not None and len(options.name) > MAX_NAME:
        raise SelectionError(f"--name {options.name!r} is longer than {MAX_NAME} characters",
                             fix="pick a shorter name; pods add suffixes to it")
    if not re.match(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$", options.cache_size):
        raise SelectionError(f"--cache-size {options.cache_size!r} is not a Kubernetes quantity",
                             fix="write it like 500Gi or 2Ti")


def base_name(options: K8sOptions, model_id: str) -> str:
    """The chosen ``--name``, else the model id folded into a DNS label."""
    if options.name:
        return options.name
    folded = re.sub(r"[^a-z0-9]+", "-", model_id.lower()).strip("-")[:MAX_NAME].strip("-")
    return folded or "servekit"


def startup_minutes(options: K8sOptions) -> int:
    """Start-up budget: the chosen minutes, else 30 plus one minute per 10 GB of checkpoint,
    never under 60 (an unknown size gets 60) nor over 360."""
    if options.startup_minutes is not None:
        return max(1, options.startup_minutes)
    if not options.model_gb:
        return 60
    return min(360, max(60, 30 + math.ceil(options.model_gb / 10)))
