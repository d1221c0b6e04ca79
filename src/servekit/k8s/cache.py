"""The Hugging Face cache: its claim, and filling it before a server starts (Job or init container).

The warm step needs nothing servekit publishes: it runs in the plan's own engine image (or an
image the user names) and calls ``huggingface_hub.snapshot_download`` once per repo with exactly
the files servekit lists for the plan (``servekit.warm``: checkpoints, drafts, tokenizers), each
as a literal pattern, at the revision the engine loads. Every engine image servekit renders
carries ``huggingface_hub`` (the engines download with it). ``snapshot_download``'s
``allow_patterns`` / ``ignore_patterns`` lists are in every release since 0.8 (they replaced
``allow_regex`` / ``ignore_regex``, https://github.com/huggingface/huggingface_hub/issues/836),
through the pinned 2.4.0; see https://huggingface.co/docs/huggingface_hub/guides/download
(Filter files to download). When the repo could not be listed, the step downloads by servekit's
patterns instead, and a note says so.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from servekit.k8s.options import HF_CACHE_PATH, K8sOptions
from servekit.k8s.pod import cache_mounts, common_env, pod_spec, split_argv
from servekit.k8s.workloads import claim, job, metadata
from servekit.records import record

WAIT_IMAGE = "busybox:1.36"
MARKER_DIR = f"{HF_CACHE_PATH}/.servekit"
PYTHON = "python3"
DOWNLOAD_SCRIPT = """\
import glob, json, pathlib, sys
from huggingface_hub import snapshot_download
for repo in json.loads(sys.argv[1]):
    allow = [glob.escape(name) for name in repo["files"]] or repo["allow_patterns"]
    path = snapshot_download(repo["repo_id"], revision=repo["revision"], allow_patterns=allow,
                             ignore_patterns=repo["ignore_patterns"] or None)
    print("cached", repo["repo_id"], "in", path, flush=True)
if len(sys.argv) > 2:
    marker = pathlib.Path(sys.argv[2])
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(sys.argv[1])
"""
"""Run as ``python3 -c DOWNLOAD_SCRIPT SPEC [MARKER]``: SPEC is the JSON list of repos
(``RepoDownload.spec``); MARKER, when given, is written last with SPEC as its content."""


@record
class RepoDownload:
    """What the warm step fetches from one hub repo: the exact files when servekit listed the
    repo, else ``huggingface_hub`` patterns."""

    repo_id: str
    revision: str = "main"
    files: tuple[str, ...] = ()
    allow_patterns: tuple[str, ...] = ()
    ignore_patterns: tuple[str, ...] = ()
    total_bytes: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def spec(self) -> dict[str, Any]:
        return {"repo_id": self.repo_id, "revision": self.revision, "files": list(self.files),
                "allow_patterns": list(self.allow_patterns), "ignore_patterns": list(self.ignore_patterns)}


def download_spec(downloads: Sequence[RepoDownload]) -> str:
    """The SPEC argument of the download script (compact JSON, one object per repo)."""
    return json.dumps([d.spec() for d in downloads], separators=(",", ":"))


def download_argv(downloads: Sequence[RepoDownload], marker: str | None) -> list[str]:
    return [PYTHON, "-c", DOWNLOAD_SCRIPT, download_spec(downloads), *([marker] if marker else [])]


def marker_path(base: str, downloads: Sequence[RepoDownload]) -> str:
    """The file the Job writes when done; its name changes with the file list, so a server of a
    changed plan never starts on an old cache."""
    digest = hashlib.sha256(download_spec(downloads).encode()).hexdigest()[:12]
    return f"{MARKER_DIR}/{base}-{digest}.warm"


def warm_container(image: str, downloads: Sequence[RepoDownload], marker: str | None) -> dict[str, Any]:
    return {"name": "warm-cache", "image": image, **split_argv(download_argv(downloads, marker)),
            "env": common_env(), "volumeMounts": cache_mounts()}


def wait_container(marker: str) -> dict[str, Any]:
    """Init container of a server pod: wait until the warm-cache Job has written its marker."""
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


def warm_plan(downloads: Sequence[RepoDownload], options: K8sOptions, base: str,
              image: str) -> tuple[list[dict], list[dict]]:
    """(extra documents, init containers for every server pod) for the chosen warm mode."""
    if options.warm_cache == "none" or not downloads:
        return [], []
    chosen = options.warm_image or image
    if options.warm_cache == "init":
        return [], [warm_container(chosen, downloads, None)]
    marker = marker_path(base, downloads)
    pod = pod_spec([warm_container(chosen, downloads, marker)], claim_name(base), restart="OnFailure")
    doc = job(metadata(f"{base}-warm-cache", options.namespace, base, "warm-cache"), pod)
    return [doc], [wait_container(marker)]
