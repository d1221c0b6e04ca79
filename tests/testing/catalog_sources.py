"""Catalog sources for ``servekit catalog sync`` tests: archives, a bare git repository and a
loopback HTTP server, all made from a catalog folder the test already has."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def repo_copy(catalog: Path, dest: Path, top: str = "recipes-main") -> Path:
    """``dest/top/``: the catalog plus a README, laid out like the recipes repository."""
    root = dest / top
    shutil.copytree(catalog, root)
    (root / "README.md").write_text("# recipes\n", encoding="utf-8")
    return root


def make_tar(folder: Path, archive: Path) -> Path:
    """``archive`` (.tar.gz) holding ``folder`` under its own name as the top folder."""
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return archive


def make_zip(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, (Path(folder.name) / path.relative_to(folder)).as_posix())
    return archive


def _git(*args: str, cwd: Path | None = None) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd or Path.cwd()), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_bare_repo(folder: Path, bare: Path) -> tuple[Path, str]:
    """A bare git repository whose one commit holds ``folder``'s files; (repo, commit)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    work = bare.parent / f"{bare.name}-work"
    shutil.copytree(folder, work)
    _git("init", "--quiet", "-b", "main", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "--quiet", "-m", "catalog", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    _git("clone", "--quiet", "--bare", str(work), str(bare), cwd=work.parent)
    return bare, commit


class _Handler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_file():
            self.send_header("ETag", f'"{hashlib.sha1(path.read_bytes()).hexdigest()}"')
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving ``folder``; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
