"""A warm-cache report as text for people (JSON comes from ``WarmReport.to_dict``)."""

from __future__ import annotations

from servekit.warm.runner import RepoReport, WarmReport

JSON_VERSION = 1


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"


def _repo_lines(repo: RepoReport, verbose_files: bool) -> list[str]:
    fetch = repo.fetch
    art = fetch.artifact
    head = f"  {art.repo_id}@{art.revision}  [{art.role}, from {art.source}]"
    if art.local:
        return [head + "  local path: nothing to download"]
    lines = [head]
    if fetch.unreachable:
        lines.append(
            f"    hub: {fetch.unreachable}"
            + (f"; using the {fetch.listing_source} record" if fetch.listing_source else "")
        )
    if not fetch.selection.exact:
        lines.append(f"    allow: {' '.join(fetch.selection.allow_patterns)}")
        lines.append(f"    ignore: {' '.join(fetch.selection.ignore_patterns)}")
    else:
        lines.append(
            f"    commit {(fetch.commit or '')[:12]}  {len(fetch.files)} files  {human_bytes(fetch.total_bytes)}"
            f"  ({human_bytes(fetch.missing_bytes)} not cached)"
        )
        if verbose_files:
            for f in fetch.files:
                mark = "cached" if f.path in fetch.cached else "fetch"
                lines.append(f"      {mark:6}  {human_bytes(f.size):>9}  {f.path}")
            if fetch.selection.skipped:
                lines.append(f"      skipped ({len(fetch.selection.skipped)}): {', '.join(fetch.selection.skipped)}")
    for note in fetch.selection.notes + fetch.notes:
        lines.append(f"    note: {note}")
    if repo.download is not None:
        d = repo.download
        lines.append(f"    downloaded {d.files_fetched} files, {human_bytes(d.bytes_fetched)} in {d.seconds:.1f} s")
    if repo.verification is not None:
        v = repo.verification
        state = "verified" if v.ok else f"{len(v.problems)} problem(s)"
        lines.append(f"    {state}: {v.checked} files checked, {v.hashed} hashed")
    if repo.repaired:
        lines.append(f"    re-fetched after a failed check: {', '.join(repo.repaired)}")
    return lines


def render_text(report: WarmReport, title: str) -> str:
    lines = [f"warm-cache: {title}" + ("  (dry run)" if report.dry_run else "")]
    for repo in report.repos:
        lines += _repo_lines(repo, verbose_files=report.dry_run)
    if report.steps:
        lines.append("pre-compile:")
        for step in report.steps:
            parts = [f"  {step.engine} {step.name}: {step.status}"]
            if step.status != "skipped":
                parts.append(f"{step.seconds:.1f} s")
            if step.reason:
                parts.append(f"({step.reason})" if step.status != "skipped" else step.reason)
            lines.append(" ".join(parts))
    if report.missing:
        lines.append(f"missing ({len(report.missing)}):")
        lines += [f"  {line}" for line in report.missing]
    total = sum(r.fetch.total_bytes for r in report.repos)
    if not all(r.fetch.selection.exact or r.fetch.artifact.local for r in report.repos):
        lines.append("total: unknown until the hub can list the repos")
    elif report.dry_run:
        lines.append(
            f"total: {human_bytes(total)} selected, "
            f"{human_bytes(sum(r.fetch.missing_bytes for r in report.repos))} to download"
        )
    else:
        lines.append(f"total: {human_bytes(total)} in the cache, {human_bytes(report.bytes_downloaded)} downloaded")
    return "\n".join(lines)


def json_document(report: WarmReport, title: str) -> dict:
    return {"version": JSON_VERSION, "title": title, **report.to_dict()}
