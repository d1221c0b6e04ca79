"""The real docker CLI parsing ``docker run`` forms, answered by a daemon that creates nothing.

The docker CLI checks its flags, and then the values it can check only knowing the daemon's
operating system (``--device``), before it asks the daemon to create the container. A stand-in
daemon on a Unix socket (``ParseOnlyDaemon``) answers the CLI's ping as a Linux engine, records
the body of each create request (what the CLI made of the flags: host config, env, entrypoint,
command) and refuses it with ``SENTINEL``: a form the CLI accepts ends with that message, one it
rejects with the CLI's own error. The real engine cannot stand in here: it would start GPU, NPU
and TPU containers whose devices this machine does not have.

``settings`` reads a form's options into the container settings they set, so that a setting
written twice (the same device, mount target, variable, or a single-valued flag) shows.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socketserver
import subprocess
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DOCKER = shutil.which("docker")
SENTINEL = "servekit-parse-only"
API_VERSION = "1.47"
SINGLE_VALUED = {"--privileged": "privileged", "--ipc": "ipc", "--network": "network", "--net": "network",
                 "--shm-size": "shm-size", "--gpus": "gpus", "--entrypoint": "entrypoint", "--runtime": "runtime",
                 "--name": "name", "--user": "user", "-u": "user"}
VALUE_OPTIONS = {"-p", "--publish", "-v", "--volume", "-e", "--env", "--device", "--group-add", "--security-opt",
                 "--cap-add", "--cap-drop", "--ulimit", "--label", "-l", "--mount", *SINGLE_VALUED} - {"--privileged"}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _send(self, code: int, body: bytes = b"") -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Api-Version", API_VERSION)
        self.send_header("Ostype", "linux")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
        self._send(200)

    def do_GET(self) -> None:  # noqa: N802
        self._send(200 if self.path.endswith("/_ping") else 404, b"OK" if self.path.endswith("/_ping") else b"{}")

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/containers/create" in self.path:
            self.server.requests.append(json.loads(body or b"{}"))
        self._send(500, json.dumps({"message": SENTINEL}).encode())

    def log_message(self, *args: Any) -> None:
        pass

    def address_string(self) -> str:
        return "unix"


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str) -> None:
        self.requests: list[dict[str, Any]] = []
        super().__init__(path, _Handler)


class ParseOnlyDaemon:
    """``with ParseOnlyDaemon(folder) as daemon: daemon.run(argv)`` -> (accepted, output, create request)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.socket = folder / "docker.sock"
        self._server: _Server | None = None

    def __enter__(self) -> ParseOnlyDaemon:
        self._server = _Server(str(self.socket))
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", ""), "HOME": str(self.folder), "DOCKER_HOST": f"unix://{self.socket}",
                "DOCKER_CONFIG": str(self.folder / "config"), **(extra or {})}

    def _result(self, done: subprocess.CompletedProcess, before: int) -> tuple[bool, str, dict[str, Any] | None]:
        assert self._server is not None
        output = (done.stdout + done.stderr).strip()
        request = self._server.requests[before] if len(self._server.requests) > before else None
        return SENTINEL in output and request is not None, output, request

    def run(self, argv: Sequence[str]) -> tuple[bool, str, dict[str, Any] | None]:
        """The CLI on ``argv`` (``docker run ...``, no shell); one at a time per daemon."""
        assert self._server is not None and DOCKER is not None
        before = len(self._server.requests)
        done = subprocess.run([DOCKER, *argv[1:]], capture_output=True, text=True, timeout=60, env=self.env())
        return self._result(done, before)

    def run_shell(self, text: str, extra_env: dict[str, str]) -> tuple[bool, str, dict[str, Any] | None]:
        """The CLI on shell text, as a person pastes it into ``sh``."""
        assert self._server is not None
        before = len(self._server.requests)
        done = subprocess.run(["sh", "-c", text], capture_output=True, text=True, timeout=60,
                              env=self.env(extra_env))
        return self._result(done, before)


def split_options(argv: Sequence[str]) -> tuple[list[tuple[str, str | None]], int]:
    """(option, value) pairs of a ``docker run`` argv and the index of its image."""
    words = [str(w) for w in argv]
    assert words[:2] == ["docker", "run"], words[:2]
    pairs: list[tuple[str, str | None]] = []
    i = 2
    while i < len(words) and words[i].startswith("-"):
        flag, eq, value = words[i].partition("=")
        if eq:
            pairs.append((flag, value))
            i += 1
        elif flag in VALUE_OPTIONS:
            pairs.append((flag, words[i + 1]))
            i += 2
        else:
            pairs.append((flag, None))
            i += 1
    return pairs, i


def settings(argv: Sequence[str]) -> Counter:
    """How often each container setting is set: a single-valued flag, a published container port,
    a mount target, an environment variable, a device, or another repeatable option's value."""
    count: Counter = Counter()
    for flag, value in split_options(argv)[0]:
        if flag in SINGLE_VALUED:
            count[SINGLE_VALUED[flag]] += 1
        elif flag in ("-p", "--publish"):
            count[f"port {str(value).rsplit(':', 1)[-1]}"] += 1
        elif flag in ("-v", "--volume"):
            count[f"mount {str(value).split(':')[1]}"] += 1
        elif flag in ("-e", "--env"):
            count[f"env {str(value).split('=', 1)[0]}"] += 1
        elif flag == "--device":
            count[f"device {str(value).split(':')[0]}"] += 1
        else:
            count[f"{flag} {value}"] += 1
    return count


def repeated(argv: Sequence[str]) -> list[str]:
    return sorted(name for name, n in settings(argv).items() if n > 1)
