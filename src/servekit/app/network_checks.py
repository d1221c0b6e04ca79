"""Deployment check: the network of each node's container, and what ``docker run`` itself says.

With ``--network host``, ``-p`` does nothing (Docker: "Published ports are discarded when using
host network mode"). A switch given twice is given once.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.command_line import split_docker_run
from servekit.findings import Finding

PORTS_CODE = "published-ports-ignored"
REPEATED_CODE = "repeated-docker-flag"
_PUBLISH = ("-p", "--publish")
_NETWORK = ("--network", "--net")
_SWITCHES = ("--privileged", "--init", "--rm", "-d", "--detach", "-t", "-i", "-it")


def network_mode(options: Sequence[str]) -> str:
    """``--network``/``--net`` (last wins), ``bridge`` when none is given."""
    mode = "bridge"
    for i, word in enumerate(options):
        name, eq, value = word.partition("=")
        if name in _NETWORK:
            mode = value if eq else (options[i + 1] if i + 1 < len(options) else mode)
    return mode


def published_ports(options: Sequence[str]) -> list[str]:
    out = []
    for i, word in enumerate(options):
        name, eq, value = word.partition("=")
        if name in _PUBLISH:
            out.append(value if eq else (options[i + 1] if i + 1 < len(options) else ""))
        elif word.startswith("-p") and len(word) > 2 and not word.startswith("--"):
            out.append(word[2:])
    return out


def network_findings(docker_argv: Sequence[str]) -> list[Finding]:
    run = split_docker_run([str(w) for w in docker_argv])
    if run is None:
        return []
    options = list(run.options)
    mode, ports = network_mode(options), published_ports(options)
    out = []
    if mode == "host" and ports:
        out.append(Finding("warning", PORTS_CODE,
                           f"-p {' -p '.join(ports)} does nothing with --network host: the server's port is the host's",
                           "drop -p"))
    out += _repeated(options)
    return out


def _repeated(options: Sequence[str]) -> list[Finding]:
    seen: set[str] = set()
    out = []
    for word in options:
        if word in _SWITCHES and word in seen:
            out.append(Finding("warning", REPEATED_CODE, f"{word} is given twice", f"give {word} once"))
        seen.add(word)
    return out
