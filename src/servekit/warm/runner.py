"""``warm_cache``: resolve, download, verify and pre-compile everything a plan's launches load.

The flow, per repo: plan the fetch (exact files from the hub listing, or the cache's record of
them when offline), download the missing ones, verify sizes and hashes, drop and re-fetch a bad
file once, record a manifest. Offline, nothing is fetched: either everything the engine needs
is present and verified, or the report lists exactly what is missing. Pre-compile steps run
last, once the cache is complete.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import field
from pathlib import Path

from servekit.records import record
from servekit.warm.artifacts import Artifact, artifacts_from_argv, dedupe
from servekit.warm.download import Advance, DownloadResult, download
from servekit.warm.engine_steps import EngineTarget, StepContext, planned, precompile
from servekit.warm.fetch_plan import RepoFetch, plan_fetch
from servekit.warm.hub import HubError, HubSettings, snapshot_path
from servekit.warm.manifest import Manifest, file_stamp, read_manifest, write_manifest
from servekit.warm.precompile import SKIPPED, StepResult
from servekit.warm.verify import RepoVerification, discard, verify_repo

# progress(repo_id, bytes to fetch) -> a callback taking received byte counts
ProgressFactory = Callable[[str, int], Advance]


@record
class WarmOptions:
    dry_run: bool = False
    precompile: bool = True
    verify_hashes: bool = True
    workers: int = 8


@record
class RepoReport:
    fetch: RepoFetch
    download: DownloadResult | None = None
    verification: RepoVerification | None = None
    repaired: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """What the engine would not find, as ``repo: file`` lines."""
        repo = self.fetch.artifact.repo_id
        if self.fetch.artifact.local:
            path = Path(repo).expanduser()
            return [] if path.exists() else [f"{repo}: local path does not exist"]
        if not self.fetch.selection.exact:
            patterns = ", ".join(self.fetch.selection.allow_patterns)
            return [f"{repo}@{self.fetch.artifact.revision}: not in the cache (needs {patterns})"]
        if self.verification is None:
            return [f"{repo}: {f.path}" for f in self.fetch.missing]
        return [f"{repo}: {p.describe()}" for p in self.verification.problems]

    def to_dict(self) -> dict:
        doc = self.fetch.to_dict()
        if self.download is not None:
            doc["downloaded"] = {
                "files": self.download.files_fetched,
                "bytes": self.download.bytes_fetched,
                "seconds": round(self.download.seconds, 3),
            }
        if self.verification is not None:
            doc["verification"] = self.verification.to_dict()
        if self.repaired:
            doc["repaired"] = list(self.repaired)
        return doc


@record
class WarmReport:
    dry_run: bool
    repos: tuple[RepoReport, ...]
    steps: tuple[StepResult, ...] = ()
    offline: str | None = None
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.missing and not any(s.status == "failed" for s in self.steps)

    @property
    def bytes_downloaded(self) -> int:
        return sum(r.download.bytes_fetched for r in self.repos if r.download)

    def to_dict(self) -> dict:
        known = all(r.fetch.selection.exact or r.fetch.artifact.local for r in self.repos)
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "offline": self.offline,
            "repos": [r.to_dict() for r in self.repos],
            "bytes": sum(r.fetch.total_bytes for r in self.repos) if known else None,
            "bytes_to_download": sum(r.fetch.missing_bytes for r in self.repos) if known else None,
            "bytes_downloaded": self.bytes_downloaded,
            "steps": [s.to_dict() for s in self.steps],
            "missing": list(self.missing),
            "notes": list(self.notes),
        }


def artifacts_of(targets: Sequence[EngineTarget]) -> list[Artifact]:
    """Every repo the launches load; the vLLM-form argv names them for every engine."""
    found: list[Artifact] = []
    for target in targets:
        found += artifacts_from_argv([str(w) for w in target.argv])
    return dedupe(found)


def _manifest(settings: HubSettings, fetch: RepoFetch, hashed: bool) -> Manifest:
    """The record of a verified snapshot; stamps only when hashes were checked."""
    art = fetch.artifact
    stamps = {
        f.path: stamp
        for f in fetch.files
        if hashed and (stamp := file_stamp(snapshot_path(settings, art.repo_id, fetch.commit or "", f.path)))
    }
    return Manifest(
        art.repo_id,
        fetch.commit or "",
        art.role,
        fetch.selection.weight_format or art.weight_format,
        fetch.selection.index,
        fetch.files,
        stamps,
    )


def _trusted(fetch: RepoFetch) -> dict[str, tuple[int, int, int]]:
    """Stamps of files hashed good before; none for a changed listing."""
    if fetch.commit is None:
        return {}
    manifest = read_manifest(fetch.artifact.repo_id, fetch.commit)
    if manifest is None:
        return {}
    listed = {f.path: f for f in manifest.files}
    current = {f.path: f for f in fetch.files}
    return {
        path: stamp for path, stamp in manifest.stamps.items() if path in current and listed.get(path) == current[path]
    }


def _fetch_and_verify(
    settings: HubSettings, fetch: RepoFetch, options: WarmOptions, progress: ProgressFactory | None
) -> RepoReport:
    advance = progress(fetch.artifact.repo_id, fetch.missing_bytes) if progress else None
    result = download(settings, fetch, advance, options.workers)
    check = verify_repo(settings, fetch, hashes=options.verify_hashes, trusted=_trusted(fetch))
    repaired: tuple[str, ...] = ()
    if not check.ok:
        bad = [p.path for p in check.problems if p.problem != "index"]
        for path in bad:
            discard(settings, fetch.artifact.repo_id, result.commit, path)
        again = plan_fetch(settings, fetch.artifact)
        download(settings, again, advance, options.workers)
        check = verify_repo(settings, again, hashes=options.verify_hashes)
        repaired = tuple(bad) if check.ok else ()
        fetch = again
    if check.ok:
        write_manifest(_manifest(settings, fetch, options.verify_hashes))
    return RepoReport(fetch, result, check, repaired)


def _offline_check(settings: HubSettings, fetch: RepoFetch, options: WarmOptions) -> RepoReport:
    if fetch.artifact.local or not fetch.selection.exact:
        return RepoReport(fetch)
    return RepoReport(
        fetch, verification=verify_repo(settings, fetch, hashes=options.verify_hashes, trusted=_trusted(fetch))
    )


def warm_cache(
    targets: Sequence[EngineTarget],
    settings: HubSettings,
    options: WarmOptions = WarmOptions(),
    steps: StepContext | None = None,
    progress: ProgressFactory | None = None,
) -> WarmReport:
    """Make the cache hold everything ``targets`` load, verified; then pre-compile."""
    artifacts = artifacts_of(targets)
    with ExitStack() as stack:
        scratch = (
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="servekit-warm-"))) if options.dry_run else None
        )
        fetches = [plan_fetch(settings, art, scratch=scratch) for art in artifacts]
    offline = next((f.unreachable for f in fetches if f.unreachable), None)
    if options.dry_run:
        steps_planned = tuple(planned(targets)) if options.precompile and steps is not None else ()
        return WarmReport(True, tuple(RepoReport(f) for f in fetches), steps_planned, offline=offline)
    if offline:
        reports = [_offline_check(settings, f, options) for f in fetches]
    else:
        reports = [
            _fetch_and_verify(settings, f, options, progress) if not f.artifact.local else RepoReport(f)
            for f in fetches
        ]
    missing = tuple(line for r in reports for line in r.missing())
    results: list[StepResult] = []
    if options.precompile and steps is not None:
        if missing:
            results = [
                StepResult("precompile", t.engine, SKIPPED, reason="the cache is incomplete") for t in targets[:1]
            ]
        else:
            results = precompile(targets, steps)
    return WarmReport(False, tuple(reports), tuple(results), offline, missing)


def require_complete(report: WarmReport) -> None:
    """Raise when the cache is incomplete (for callers that want an exception, not a report)."""
    if report.missing:
        raise HubError(
            f"{len(report.missing)} file(s) missing from the cache: " + "; ".join(report.missing[:5]),
            fix="run servekit warm-cache with the hub reachable",
        )
