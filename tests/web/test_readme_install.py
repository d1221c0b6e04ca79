"""``servekit web`` works after exactly the README's first command.

The checkout (its tracked and new files, as git lists them) is copied to a temporary folder,
the README's first command runs there verbatim through bash (a fresh venv, ``pip install -e .``
with no extras, then ``servekit plan``), and that venv's ``servekit web`` serves the builder
page and the live API on a free loopback port until it is stopped. Marked ``engine``: the
install takes a minute or more.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from servekit.processes import free_port, stop_group, wait_http_ok

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]


def readme_first_command() -> str:
    """The first line of the README's first code block."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    return lines[start + 1]


def copy_checkout(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    return dest


def test_the_readme_command_gives_a_working_servekit_web(tmp_path):
    command = readme_first_command()
    assert command.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e . "), command
    checkout = copy_checkout(tmp_path / "checkout")
    installed = subprocess.run(["bash", "-c", command], cwd=checkout, capture_output=True, text=True, timeout=1200)
    assert installed.returncode == 0, installed.stderr[-4000:]
    assert "vllm serve Qwen/Qwen3.8-27B" in installed.stdout  # the plan the same line prints

    port = free_port()
    log = tmp_path / "web.log"
    with log.open("wb") as out:
        server = subprocess.Popen([str(checkout / ".venv" / "bin" / "servekit"), "web", "--port", str(port)],
                                  stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ), start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        problem = wait_http_ok(f"{base}/", server.poll, timeout=120, interval=0.5)
        assert problem is None, f"{problem}: {log.read_text(errors='replace')[-3000:]}"
        with urllib.request.urlopen(f"{base}/?model=Qwen/Qwen3.8-27B", timeout=30) as page:
            assert page.status == 200 and "vllm serve Qwen/Qwen3.8-27B" in page.read().decode()
        with urllib.request.urlopen(f"{base}/api/models.json", timeout=30) as api:
            assert api.status == 200 and api.headers["content-type"] == "application/json"
        head = urllib.request.Request(f"{base}/", method="HEAD")
        with urllib.request.urlopen(head, timeout=30) as answered:
            assert answered.status == 200 and answered.read() == b""
    finally:
        stopped = stop_group(server.pid, grace=10.0)
    assert stopped.clean, stopped
