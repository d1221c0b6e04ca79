"""A Hugging Face Hub compatible HTTP server on loopback, for tests and benchmarks.

It serves model repos made from local folders with the endpoints ``huggingface_hub`` uses to
list and download (the real client is pointed at it with ``HF_ENDPOINT`` / ``endpoint=``):

- ``GET /api/models/{repo}`` and ``/api/models/{repo}/revision/{rev}``: repo info with ``sha``
  and ``siblings`` (sizes, blob ids and LFS sha256 with ``?blobs=true``)
- ``GET /api/models/{repo}/tree/{rev}[/{path}]``: the tree listing (``recursive``), LFS metadata
- ``HEAD`` / ``GET /{repo}/resolve/{rev}/{file}``: ``X-Repo-Commit``, ``ETag``, ``X-Linked-Etag``,
  ``X-Linked-Size``, ``Content-Length``, ``Accept-Ranges`` and ``Range`` requests (206)
- errors carry ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``)

Large binary files are stored as LFS (ETag = sha256), the rest as plain git blobs (ETag = git
blob sha1), as on the real hub. Faults can be injected per file: drop the connection after N
bytes once (the client resumes with ``Range``), or answer with an HTTP status.
Every request is recorded in ``requests`` for assertions; ``bytes_per_second`` throttles file
bodies like a real link (benchmarks).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".pth", ".pt", ".gguf", ".onnx", ".h5", ".msgpack", ".model")
LFS_MIN_SIZE = 10 * 1024 * 1024


@dataclass(frozen=True)
class HubFile:
    path: str
    source: Path
    size: int
    blob_id: str  # git blob sha1
    sha256: str | None  # set for LFS files

    @property
    def etag(self) -> str:
        return self.sha256 or self.blob_id

    def listing(self) -> dict:
        entry = {"type": "file", "oid": self.blob_id, "size": self.size, "path": self.path}
        if self.sha256:
            entry["lfs"] = {"oid": self.sha256, "size": self.size, "pointerSize": 134}
        return entry

    def sibling(self) -> dict:
        entry: dict = {"rfilename": self.path, "size": self.size, "blobId": self.blob_id}
        if self.sha256:
            entry["lfs"] = {"sha256": self.sha256, "size": self.size, "pointerSize": 134}
        return entry


@dataclass
class HubRepo:
    repo_id: str
    commit: str
    files: dict[str, HubFile]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    range: str | None


@dataclass
class _Fault:
    kind: str  # "drop" | "status"
    value: int
    remaining: int  # how many more requests it applies to; -1 = always


def _describe(root: Path, rel: str) -> HubFile:
    source = root / rel
    data = source.read_bytes()
    blob_id = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    is_lfs = rel.endswith(LFS_SUFFIXES) or len(data) >= LFS_MIN_SIZE
    sha256 = hashlib.sha256(data).hexdigest() if is_lfs else None
    return HubFile(path=rel, source=source, size=len(data), blob_id=blob_id, sha256=sha256)


def repo_from_folder(repo_id: str, folder: str | Path) -> HubRepo:
    root = Path(folder)
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    files = {rel: _describe(root, rel) for rel in rels}
    digest = hashlib.sha1(repo_id.encode())
    for rel in rels:
        digest.update(f"{rel}:{files[rel].etag}\n".encode())
    return HubRepo(repo_id=repo_id, commit=digest.hexdigest(), files=files)


@dataclass
class HubServer:
    """Start with ``with HubServer() as hub:``; ``hub.endpoint`` is the base URL."""

    repos: dict[str, HubRepo] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    bytes_per_second: float | None = None  # the link's speed, shared by all connections (benchmarks)
    _link_free_at: float = 0.0
    _faults: dict[tuple[str, str], _Fault] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- set-up ---------------------------------------------------------------------------
    def add_repo(self, repo_id: str, folder: str | Path) -> HubRepo:
        repo = repo_from_folder(repo_id, folder)
        self.repos[repo_id] = repo
        return repo

    def drop_connection_once(self, repo_id: str, path: str, after_bytes: int) -> None:
        """The next GET of ``path`` sends ``after_bytes`` of the body, then closes the socket."""
        self._faults[(repo_id, path)] = _Fault("drop", after_bytes, 1)

    def fail_with_status(self, repo_id: str, path: str, status: int, times: int = -1) -> None:
        """GET of ``path`` answers ``status`` (``times`` requests, -1 = until cleared); HEAD still works."""
        self._faults[(repo_id, path)] = _Fault("status", status, times)

    def clear_faults(self) -> None:
        self._faults.clear()

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> HubServer:
        hub = self

        class Handler(_HubHandler):
            server_state = hub

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="hub-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- queries for assertions -----------------------------------------------------------
    def downloads(self, repo_id: str | None = None) -> list[RecordedRequest]:
        """GET requests of file bodies (``/resolve/``), optionally for one repo."""
        prefix = f"/{repo_id}/resolve/" if repo_id else None
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == "GET" and "/resolve/" in r.path and (prefix is None or r.path.startswith(prefix))
            ]

    def downloaded_files(self, repo_id: str) -> list[str]:
        return [r.path.split("/resolve/", 1)[1].split("/", 1)[1] for r in self.downloads(repo_id)]

    def _take_fault(self, repo_id: str, path: str, method: str) -> _Fault | None:
        with self._lock:
            fault = self._faults.get((repo_id, path))
            if fault is None or method != "GET":
                return None
            if fault.remaining > 0:
                fault.remaining -= 1
                if fault.remaining == 0:
                    del self._faults[(repo_id, path)]
            return fault


class _HubHandler(BaseHTTPRequestHandler):
    server_state: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return

    # -- plumbing ---------------------------------------------------------------------------
    def _record(self) -> None:
        state = self.server_state
        with state._lock:
            state.requests.append(
                RecordedRequest(self.command, unquote(urlsplit(self.path).path), self.headers.get("Range"))
            )

    def _send_json(self, status: int, doc: object, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(
            status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message, **(headers or {})}
        )

    def _find_repo(self, parts: list[str]) -> tuple[HubRepo | None, list[str]]:
        """Repo ids are ``org/name``: the first two path parts."""
        if len(parts) < 2:
            return None, parts
        return self.server_state.repos.get(f"{parts[0]}/{parts[1]}"), parts[2:]

    def _check_revision(self, repo: HubRepo, revision: str) -> bool:
        if revision in ("main", repo.commit):
            return True
        self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return False

    # -- verbs -----------------------------------------------------------------------------
    def do_HEAD(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch()

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch()

    def _dispatch(self) -> None:
        self._record()
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if parts[:2] == ["api", "models"]:
            self._api(parts[2:], query)
        elif "resolve" in parts:
            self._resolve(parts)
        else:
            self._error(404, "NotFound", f"no route for {url.path}")

    def _api(self, parts: list[str], query: dict[str, str]) -> None:
        repo, rest = self._find_repo(parts)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return
        if not rest or rest[0] == "revision":
            if rest and not self._check_revision(repo, "/".join(rest[1:])):
                return
            self._send_json(200, self._info(repo, blobs=query.get("blobs", "").lower() == "true"))
        elif rest[0] == "tree" and len(rest) >= 2:
            if not self._check_revision(repo, rest[1]):
                return
            self._send_json(200, self._tree(repo, "/".join(rest[2:]), query.get("recursive", "").lower() == "true"))
        else:
            self._error(404, "NotFound", "unknown api route")

    @staticmethod
    def _info(repo: HubRepo, blobs: bool) -> dict:
        siblings = [f.sibling() if blobs else {"rfilename": f.path} for f in repo.files.values()]
        return {
            "_id": repo.commit[:24],
            "id": repo.repo_id,
            "modelId": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": repo.commit,
            "lastModified": "2026-11-01T00:00:00.000Z",
            "private": False,
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "library_name": "transformers",
            "siblings": siblings,
            "usedStorage": sum(f.size for f in repo.files.values()),
        }

    @staticmethod
    def _tree(repo: HubRepo, base: str, recursive: bool) -> list[dict]:
        prefix = f"{base.strip('/')}/" if base.strip("/") else ""
        entries: dict[str, dict] = {}
        for file in repo.files.values():
            if not file.path.startswith(prefix):
                continue
            rest = file.path[len(prefix) :].split("/")
            for depth in range(1, len(rest)):
                folder = prefix + "/".join(rest[:depth])
                if recursive or depth == 1:
                    entries.setdefault(folder, {"type": "directory", "oid": "0" * 40, "size": 0, "path": folder})
            if recursive or len(rest) == 1:
                entries[file.path] = file.listing()
        return [entries[key] for key in sorted(entries)]

    def _resolve(self, parts: list[str]) -> None:
        repo, rest = self._find_repo(parts)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return
        if len(rest) < 3 or rest[0] != "resolve":
            self._error(404, "NotFound", "bad resolve route")
            return
        if not self._check_revision(repo, rest[1]):
            return
        path = "/".join(rest[2:])
        file = repo.files.get(path)
        if file is None:
            self._error(404, "EntryNotFound", f"{path} does not exist", {"X-Repo-Commit": repo.commit})
            return
        fault = self.server_state._take_fault(repo.repo_id, path, self.command)
        if fault is not None and fault.kind == "status":
            self._error(fault.value, "ServerError", "injected failure")
            return
        self._send_file(repo, file, fault)

    def _send_file(self, repo: HubRepo, file: HubFile, fault: _Fault | None) -> None:
        start, end = 0, file.size - 1
        wanted = self.headers.get("Range")
        status = 200
        if wanted and wanted.startswith("bytes=") and file.size:
            first, _, last = wanted[len("bytes=") :].partition("-")
            start = int(first) if first else 0
            end = min(int(last), file.size - 1) if last else file.size - 1
            if start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{file.size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        length = end - start + 1 if file.size else 0
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("X-Repo-Commit", repo.commit)
        self.send_header("ETag", f'"{file.etag}"')
        if file.sha256:
            self.send_header("X-Linked-Etag", f'"{file.sha256}"')
            self.send_header("X-Linked-Size", str(file.size))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{file.size}")
        self.end_headers()
        if self.command == "HEAD":
            return
        with file.source.open("rb") as fh:
            fh.seek(start)
            body = fh.read(length)
        if fault is not None and fault.kind == "drop":
            self.wfile.write(body[: fault.value])
            self.wfile.flush()
            self.close_connection = True  # the client sees a short body and resumes with Range
            return
        self._write_throttled(body)

    def _write_throttled(self, body: bytes) -> None:
        state = self.server_state
        rate = state.bytes_per_second
        if not rate:
            self.wfile.write(body)
            return
        chunk = 256 * 1024
        for offset in range(0, len(body), chunk):
            piece = body[offset : offset + chunk]
            with state._lock:  # every connection shares the one link
                done_at = max(time.monotonic(), state._link_free_at) + len(piece) / rate
                state._link_free_at = done_at
            self.wfile.write(piece)
            delay = done_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
