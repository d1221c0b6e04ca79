"""Fetch a catalog source into a folder: an archive URL, a git URL, a local archive or directory.

Nothing here validates or publishes; ``servekit.catalog.sync`` does that with what this returns.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from servekit.atomic import replacing
from servekit.catalog.archives import extract_archive
from servekit.errors import ServekitError
from servekit.records import record

DEFAULT_SOURCE = "https://github.com/vllm-project/recipes/archive/refs/heads/main.tar.gz"
"""The public vLLM recipes catalog: the main branch of github.com/vllm-project/recipes."""

Progress = Callable[[int, "int | None"], None]
"""Called with (bytes so far, total bytes or None) while an archive downloads."""

_GIT_SCHEMES = ("git://", "ssh://", "git+")


class SourceUnreachable(ServekitError):
    """The source could not be reached (no network, host down, clone refused)."""


@record
class Source:
    text: str
    """As the user wrote it (or the default URL)."""
    kind: str
    """``archive-url``, ``git``, ``archive`` or ``directory``."""
    location: str
    """The URL or absolute path to fetch."""


@record
class Fetched:
    tree: Path
    """The fetched files; the catalog root is this folder or one below it."""
    revision: str


def _is_bare_repo(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _local_source(text: str) -> Source:
    path = Path(text).expanduser()
    if not path.exists():
        raise ServekitError(
            f"catalog source {text!r} does not exist",
            fix="give an archive URL, a git URL, a catalog directory or a .tar.gz/.zip archive",
        )
    path = path.resolve()
    if path.is_dir():
        return Source(text, "git" if _is_bare_repo(path) else "directory", str(path))
    return Source(text, "archive", str(path))


def classify(text: str | None) -> Source:
    """Which kind of source ``text`` names (None: the public catalog's archive)."""
    if not text:
        return Source(DEFAULT_SOURCE, "archive-url", DEFAULT_SOURCE)
    lowered = text.lower()
    if lowered.startswith(_GIT_SCHEMES) or (lowered.startswith("git@") and ":" in text):
        return Source(text, "git", text.removeprefix("git+"))
    if lowered.startswith("file://"):
        path = Path(urlparse(text).path)
        if path.is_dir() or lowered.endswith(".git"):
            return Source(text, "git", text)
        return Source(text, "archive", str(path))
    if lowered.startswith(("http://", "https://")):
        return Source(text, "git" if lowered.rstrip("/").endswith(".git") else "archive-url", text)
    return _local_source(text)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def download(url: str, dest: Path, progress: Progress | None = None) -> str | None:
    """Stream ``url`` into ``dest`` (in place when the whole body arrived, else left as it was);
    returns the response's ETag (None when it sends none)."""
    import httpx

    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=httpx.Timeout(30.0)) as response:
            if response.status_code >= 400:
                raise SourceUnreachable(f"{url} answered HTTP {response.status_code}")
            total = int(response.headers.get("content-length") or 0) or None
            done = 0
            with replacing(dest) as fh:
                for chunk in response.iter_bytes(1 << 16):
                    fh.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total)
            etag = response.headers.get("etag")
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        raise SourceUnreachable(f"cannot reach {url}: {reason}") from None
    return etag.strip('"').removeprefix("W/").strip('"') if etag else None


def _run_git(args: list[str], source: str) -> str:
    git = shutil.which("git")
    if git is None:
        raise ServekitError("git is not installed, so a git URL cannot be synced",
                            fix="install git, or give an archive URL or a directory")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run([git, *args], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise SourceUnreachable(f"cannot clone {source}: {lines[-1] if lines else 'git failed'}")
    return done.stdout.strip()


def clone(url: str, dest: Path) -> str:
    """Shallow clone of the default branch; returns the commit checked out."""
    _run_git(["clone", "--quiet", "--depth", "1", "--no-tags", url, str(dest)], url)
    return _run_git(["-C", str(dest), "rev-parse", "HEAD"], url)


def _copy_tree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", ".hg", ".svn"))


def fetch(source: Source, workdir: Path, progress: Progress | None = None) -> Fetched:
    """Fetch ``source`` into ``workdir/tree``; the revision says which version it is."""
    tree = workdir / "tree"
    if source.kind == "directory":
        _copy_tree(Path(source.location), tree)
        return Fetched(tree, "")
    if source.kind == "git":
        commit = clone(source.location, tree)
        shutil.rmtree(tree / ".git", ignore_errors=True)
        return Fetched(tree, f"git:{commit}")
    if source.kind == "archive":
        archive = Path(source.location)
        extract_archive(archive, tree)
        return Fetched(tree, _sha256(archive))
    archive = workdir / "download"
    etag = download(source.location, archive, progress)
    extract_archive(archive, tree)
    revision = f"etag:{etag}" if etag else _sha256(archive)
    archive.unlink()
    return Fetched(tree, revision)
