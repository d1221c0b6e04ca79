"""The Hugging Face cache: its claim, and warming it before a server starts (Job or init container)."""

from __future__ import annotations

import shlex
from typing import Any

from servekit import __version__
from servekit.k8s.options import HF_CACHE_PATH, K8sOptions
from servekit.k8s.pod import cache_mounts, common_env, pod_spec, split_argv
from servekit.k8s.workloads import claim, job, metadata
from servekit.synthesis.plan import Plan

DEFAULT_WARM_IMAGE = "python:3.12-slim"
WAIT_IMAGE = "busybox:1.36"
MARKER_DIR = f"{HF_CACHE_PATH}/.servekit"


def warm_argv(plan: Plan) -> list[str]:
    """``servekit warm-cache`` for exactly this plan's selection."""
    sel = plan.selection
    argv = ["servekit", "warm-cache", sel.recipe_id, "--hardware", sel.hardware, "--variant", sel.variant,
            "--strategy", sel.strategy]
    if sel.node_count > 1:
        argv += ["--nodes", str(sel.node_count)]
    for feature in sel.features:
        argv += ["--feature", feature]
    for feature, mode in sel.modes:
        argv += ["--mode", f"{feature}={mode}"]
    if sel.engine != "vllm":
        argv += ["--engine", sel.engine]
    return argv


def marker_path(base: str) -> str:
    return f"{MARKER_DIR}/{base}.warm"


def warm_script(plan: Plan, options: K8sOptions, marker: str | None) -> list[str]:
    """argv of the warm container: install servekit unless the image has it, warm, mark done."""
    steps = [] if options.servekit_image else [f"pip install --no-cache-dir servekit=={__version__}"]
    steps.append(shlex.join(warm_argv(plan)))
    if marker is None and options.servekit_image:
        return warm_argv(plan)
    if marker is not None:
        steps += [f"mkdir -p {shlex.quote(MARKER_DIR)}", f"touch {shlex.quote(marker)}"]
    return ["/bin/sh", "-c", " && ".join(steps)]


def warm_container(plan: Plan, options: K8sOptions, marker: str | None) -> dict[str, Any]:
    return {"name": "warm-cache", "image": options.servekit_image or DEFAULT_WARM_IMAGE,
            **split_argv(warm_script(plan, options, marker)), "env": common_env(), "volumeMounts": cache_mounts()}


def wait_container(marker: str) -> dict[str, Any]:
    """Init container of a server pod: wait until the warm-cache Job has marked the cache done."""
    script = f"until [ -f {shlex.quote(marker)} ]; do echo waiting for the warm-cache Job; sleep 15; done"
    return {"name": "wait-for-cache", "image": WAIT_IMAGE, "command": ["/bin/sh", "-c"], "args": [script],
            "volumeMounts": cache_mounts()}


def claim_name(base: str) -> str:
    return f"{base}-hf-cache"


def cache_claim(base: str, options: K8sOptions, shared: bool) -> dict[str, Any]:
    """The cache claim; ReadWriteMany when several pods (or the warm Job) mount it at once."""
    mode = options.access_mode or ("ReadWriteMany" if shared or options.warm_cache == "job" else "ReadWriteOnce")
    return claim(metadata(claim_name(base), options.namespace, base, "cache"), options.cache_size, mode,
                 options.storage_class)


def warm_plan(plan: Plan, options: K8sOptions, base: str) -> tuple[list[dict], list[dict]]:
    """(extra documents, init containers for every server pod) for the chosen warm mode."""
    if options.warm_cache == "none":
        return [], []
    if options.warm_cache == "init":
        return [], [warm_container(plan, options, None)]
    marker = marker_path(base)
    pod = pod_spec([warm_container(plan, options, marker)], claim_name(base), restart="OnFailure")
    doc = job(metadata(f"{base}-warm-cache", options.namespace, base, "warm-cache"), pod)
    return [doc], [wait_container(marker)]
