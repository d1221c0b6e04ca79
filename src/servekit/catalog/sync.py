"""``sync_catalog(source)``: fetch a recipes catalog, validate it, and make it the synced copy.

The copy in use changes only at the very end, by one atomic link swap (``catalog.store``); a
sync that fails, is refused or is killed midway leaves the earlier copy working.
"""

from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import field, replace
from pathlib import Path

from servekit.catalog.documents import recipe_paths
from servekit.catalog.fetch import Fetched, Progress, Source, SourceUnreachable, classify, fetch
from servekit.catalog.findings import Finding
from servekit.catalog.store import (
    CATALOG_FOLDER,
    SyncRecord,
    content_hash,
    describe_age,
    new_staging,
    publish,
    read_record,
    remove_leftovers,
    sync_lock,
)
from servekit.errors import CatalogError, Location, ServekitError
from servekit.records import record

_SKIP = {".git", ".hg", ".svn", "node_modules", "__pycache__"}
MAX_DEPTH = 4


@record
class SyncResult:
    record: SyncRecord
    changed: bool
    """False when the source held exactly the copy already in use."""
    warnings: list[Finding] = field(default_factory=list)


class SyncRefused(CatalogError):
    """The fetched catalog has validation errors; the earlier copy stays in use."""

    def __init__(self, message: str, *, location: Location, fix: str, findings: list[Finding]) -> None:
        super().__init__(message, location=location, fix=fix)
        self.findings = findings


def _is_catalog_root(path: Path) -> bool:
    return (path / "taxonomy.yaml").is_file() and (path / "models").is_dir()


def locate_root(tree: Path, source: str) -> Path:
    """The shallowest folder of ``tree`` that holds models/ and taxonomy.yaml."""
    level = [tree]
    for _ in range(MAX_DEPTH + 1):
        found = sorted(p for p in level if _is_catalog_root(p))
        if found:
            return found[0]
        level = sorted(c for p in level for c in p.iterdir() if c.is_dir() and c.name not in _SKIP)
    raise ServekitError(
        f"no recipes catalog in {source}: no folder in it holds both models/ and taxonomy.yaml",
        fix="give the recipes repository (or a copy of it) as the source",
    )


def keep_message() -> str:
    """What stays in use when a sync does not finish."""
    sync_record = read_record()
    if sync_record is None:
        return "no catalog has been synced yet, so the bundled catalog stays in use alone"
    age = describe_age(sync_record.age_seconds())
    return f"the catalog synced {age} ago from {sync_record.source} stays in use"


def _as_in_source(finding: Finding, root: Path, origin: str) -> Finding:
    """The finding with its file named where the user can find it (in the source, not in staging)."""
    file = Path(finding.location.file)
    if not file.is_relative_to(root):
        return finding
    return replace(finding, location=replace(finding.location, file=f"{origin}/{file.relative_to(root).as_posix()}"))


def _origin(source: Source, fetched: Fetched, root: Path) -> str:
    """How a file of the fetched catalog root is named for people: a path in the source."""
    inside = root.relative_to(fetched.tree).as_posix()
    if source.kind == "directory":
        return str(Path(source.location) / inside) if inside != "." else source.location
    return f"{source.text}!" + ("" if inside == "." else f"/{inside}")


def _validate(root: Path, source: str, origin: str) -> list[Finding]:
    from servekit.catalog.validate import validate_catalog

    findings = [_as_in_source(f, root, origin) for f in validate_catalog(root)]
    errors = [f for f in findings if f.is_error]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SyncRefused(
            f"the catalog from {source} does not validate: {first.message}{more}; not synced, {keep_message()}",
            location=first.location,
            fix=first.fix,
            findings=errors,
        )
    return findings


def _record(source: Source, revision: str, root: Path, digest: tuple[str, int], warnings: int) -> SyncRecord:
    return SyncRecord(
        source=source.text if source.kind in ("archive-url", "git") else source.location,
        kind=source.kind,
        revision=revision or digest[0],
        content_hash=digest[0],
        file_count=digest[1],
        recipe_count=len(recipe_paths(root)),
        synced_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        warnings=warnings,
    )


def _stage(source: Source, staging: Path, progress: Progress | None) -> SyncResult | tuple[SyncRecord, list[Finding]]:
    """Fetch, locate, compare and validate inside ``staging``; the new record when it is new."""
    try:
        fetched = fetch(source, staging, progress)
    except SourceUnreachable as exc:
        raise SourceUnreachable(f"{exc.message}; {keep_message()}", fix="check the network or the source, then sync again") from None
    root = locate_root(fetched.tree, source.text)
    digest = content_hash(root)
    current = read_record()
    if current is not None and current.content_hash == digest[0]:
        return SyncResult(current, changed=False)
    warnings = [f for f in _validate(root, source.text, _origin(source, fetched, root)) if not f.is_error]
    root.rename(staging / CATALOG_FOLDER)
    shutil.rmtree(fetched.tree, ignore_errors=True)
    return _record(source, fetched.revision, staging / CATALOG_FOLDER, digest, len(warnings)), warnings


def sync_catalog(source_text: str | None = None, progress: Progress | None = None) -> SyncResult:
    """Fetch ``source_text`` (default: the public catalog), validate it and make it current."""
    source = classify(source_text)
    with sync_lock():
        remove_leftovers()
        staging = new_staging()
        try:
            staged = _stage(source, staging, progress)
            if isinstance(staged, SyncResult):
                return staged
            sync_record, warnings = staged
            publish(staging, sync_record)
        except OSError as exc:
            raise ServekitError(
                f"cannot store the synced catalog under {staging.parent}: {exc.strerror or exc}; {keep_message()}",
                fix="free disk space or fix the folder's permissions, then sync again",
            ) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return SyncResult(sync_record, changed=True, warnings=warnings)
