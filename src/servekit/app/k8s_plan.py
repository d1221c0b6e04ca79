"""A plan's Kubernetes form: the files its warm step downloads, the documents, the printed text.

The warm step's file list is servekit's own (``servekit.warm``): the repos the plan's launches
load (checkpoints, drafts, tokenizers), and for each the exact files the engine reads, from the
hub's listing or, offline, from what the cache knows of the repo. When neither is at hand the
step downloads by servekit's patterns for that repo, and a note says so.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from servekit.app.request import load_documents
from servekit.errors import SelectionError
from servekit.k8s import K8sOptions, Manifests, RepoDownload, build_manifests, manifests_text, plan_header
from servekit.synthesis.plan import Plan
from servekit.warm.artifacts import Artifact, artifacts_from_argv, dedupe
from servekit.warm.fetch_plan import RepoFetch, plan_fetch
from servekit.warm.file_rules import patterns_for
from servekit.warm.hub import HubError, HubSettings

EXACT_HINT = "run `servekit plan --format k8s` where the hub is reachable (or after `servekit warm-cache`) " \
             "for the exact file list"


def plan_artifacts(plan: Plan) -> list[Artifact]:
    """Every hub repo the plan's launches load (local paths left out), in order, once each."""
    found = [a for p in plan.processes for a in artifacts_from_argv([str(t) for t in p.argv()])]
    return [a for a in dedupe(found) if not a.local]


def _download(fetch: RepoFetch) -> RepoDownload:
    art, selection = fetch.artifact, fetch.selection
    if selection.exact:
        return RepoDownload(art.repo_id, art.revision, files=tuple(f.path for f in fetch.files),
                            total_bytes=fetch.total_bytes, notes=fetch.notes)
    return _patterns(art, fetch.unreachable or "servekit has no listing of it")


def _patterns(artifact: Artifact, why: str) -> RepoDownload:
    """The repo's files by servekit's patterns: every root file of the kinds the engine reads,
    shards a weight index leaves out included."""
    selection = patterns_for(artifact.role, artifact.weight_format)
    note = (f"downloads by pattern ({why}): every root file matching {', '.join(selection.allow_patterns)}, "
            f"which may include files the engine does not load; {EXACT_HINT}")
    return RepoDownload(artifact.repo_id, artifact.revision, allow_patterns=selection.allow_patterns,
                        ignore_patterns=selection.ignore_patterns, notes=(note,))


def warm_downloads(plan: Plan, settings: HubSettings) -> list[RepoDownload]:
    """What the warm step fetches for ``plan``: exact files where the repo can be listed (the hub,
    or offline the cache's record of it), servekit's patterns otherwise. Nothing is written to
    the cache: a weight index read to narrow the shards goes to a scratch folder."""
    out = []
    with tempfile.TemporaryDirectory(prefix="servekit-k8s-") as scratch:
        for artifact in plan_artifacts(plan):
            try:
                out.append(_download(plan_fetch(settings, artifact, scratch=Path(scratch))))
            except HubError as exc:
                out.append(_patterns(artifact, exc.message))
    return out


def hardware_profile(hardware: str, catalog: str | None = None) -> Mapping[str, Any]:
    """The taxonomy profile of ``hardware`` in the catalog the plan came from."""
    profile = (load_documents(catalog, "").taxonomy.get("hardware_profiles") or {}).get(hardware)
    if profile is None:
        raise SelectionError(f"unknown hardware {hardware!r} in the catalog's taxonomy",
                             fix="use a hardware id from hardware_profiles in the catalog's taxonomy.yaml")
    return profile


def plan_manifests(plan: Plan, options: K8sOptions, *, settings: HubSettings, catalog: str | None = None,
                   profile: Any = None, downloads: Sequence[RepoDownload] | None = None) -> Manifests:
    """The documents for ``plan``, their notes and servekit's findings about them."""
    chosen = profile if profile is not None else hardware_profile(plan.selection.hardware, catalog)
    files = warm_downloads(plan, settings) if downloads is None and options.warm_cache != "none" else downloads
    return build_manifests(plan, chosen, options, files or ())


def plan_k8s_text(manifests: Manifests, plan: Plan) -> str:
    """The YAML ``servekit plan --format k8s`` prints: header, findings and notes as comments, documents."""
    return manifests_text(manifests, plan_header(plan))
