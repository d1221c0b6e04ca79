"""``servekit web`` as a person starts it: a busy port is one clear error before anything is
printed, ``HEAD`` is answered wherever ``GET`` is, and the web modules stay out of the commands
that do not serve (a cold ``plan`` imports none of them)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from servekit.cli.app import main
from servekit.processes import listener


def test_a_busy_port_is_one_error_before_the_banner(capsys):
    taken = listener("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        code = main(["web", "--port", str(port)])
    finally:
        taken.close()
    out, err = capsys.readouterr()
    assert code == 1
    assert "servekit web:" not in out  # no banner for a server that never started
    assert f"port {port} on 127.0.0.1 is in use" in err and "--port" in err
    assert "Traceback" not in err and "Errno" not in err


def test_an_address_not_of_this_machine_is_one_error(capsys):
    code = main(["web", "--host", "192.0.2.1", "--port", "8080"])  # TEST-NET-1: never a local address
    out, err = capsys.readouterr()
    assert code == 1 and "servekit web:" not in out
    assert "cannot listen on 192.0.2.1:8080" in err and "--host" in err


@pytest.mark.parametrize("port", ["0", "70000"])
def test_a_port_out_of_range_is_refused(capsys, port):
    assert main(["web", "--port", port]) == 1
    assert "--port must be from 1 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["/", "/catalog", "/api/models.json", "/openapi.json", "/static/site.css"])
def test_head_answers_like_get_without_a_body(client, path):
    got, head = client.get(path), client.head(path)
    assert got.status_code == head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(got.content))
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-security-policy"] == got.headers["content-security-policy"]


def test_head_of_a_missing_file_is_404(client):
    assert client.head("/api/nope/none.json").status_code == 404


def test_a_cold_plan_imports_no_web_module():
    code = ("import sys\nfrom servekit.cli.app import main\n"
            "code = main(['plan', 'Qwen/Qwen3.8-27B', '--format', 'json'])\n"
            "web = sorted(m for m in sys.modules if m.split('.')[0] in ('fastapi', 'starlette', 'uvicorn', 'jinja2')"
            " or m.startswith('servekit.web'))\n"
            "print(code, web, file=sys.stderr)\n"
            "sys.exit(1 if code or web else 0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
