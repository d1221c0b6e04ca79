"""A stand-in ``docker`` program for the fast test of ``up --docker`` with a Docker engine: the
fast suite must not need a Docker engine (``test_docker_engine.py`` runs the same path against
Debian's docker.io, which ``scripts/install_docker.sh`` starts, and skips where none answers).
It implements the few commands ``up``/``down`` use (``info``, ``run --detach``, ``logs
--follow``, ``stop``, ``rm``); a "container" is ``standin_server.py`` listening on the host
port the command publishes (``-p [HOST:]PORT:PORT``). Each call is appended to
``calls.jsonl`` in ``$STANDIN_DOCKER_STATE``.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ.get("STANDIN_DOCKER_STATE", "/tmp/standin-docker"))


def _container(cid: str) -> dict:
    return json.loads((STATE / f"{cid}.json").read_text())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def run(args: list[str]) -> int:
    port = next(args[i + 1].rsplit(":", 2)[-2] for i, a in enumerate(args) if a == "-p")
    cid = secrets.token_hex(32)
    log = (STATE / f"{cid}.log").open("ab")
    proc = subprocess.Popen([sys.executable, str(HERE / "standin_server.py"), "--role", "container", "--port", port,
                             "--host", "127.0.0.1"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (STATE / f"{cid}.json").write_text(json.dumps({"pid": proc.pid, "args": args}))
    print(cid)
    return 0


def logs(cid: str) -> int:
    pid, offset = _container(cid)["pid"], 0
    while True:
        data = (STATE / f"{cid}.log").read_bytes()
        sys.stdout.write(data[offset:].decode(errors="replace"))
        sys.stdout.flush()
        offset = len(data)
        if not _alive(pid):
            return 0
        time.sleep(0.2)


def main(argv: list[str]) -> int:
    STATE.mkdir(parents=True, exist_ok=True)
    with (STATE / "calls.jsonl").open("a") as fh:
        fh.write(json.dumps(argv) + "\n")
    command, args = argv[0], argv[1:]
    if command == "info":
        print("27.0.0-standin")
        return 0
    if command == "run":
        return run(args)
    if command == "logs":
        return logs(args[-1])
    if command == "stop":
        os.killpg(_container(args[-1])["pid"], signal.SIGTERM)
        print(args[-1])
        return 0
    if command == "rm":
        (STATE / f"{args[-1]}.json").unlink()
        print(args[-1])
        return 0
    print(f"standin docker: unknown command {command}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
