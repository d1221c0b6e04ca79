"""Two "nodes" on one machine: network namespaces joined by a veth pair (root and iproute2 needed;
the fixture skips, saying why, where they cannot be made)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

SUBNET = "10.201.0"
IFACE = "sknode0"
"""The same interface name in both namespaces, so one ``IFACE_NAME`` fits both nodes."""


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def netns_works() -> str | None:
    """Why network namespaces cannot be made here, or None when they can."""
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    name = f"skprobe{os.getpid()}"
    try:
        ip("netns", "add", name)
    except subprocess.CalledProcessError as exc:
        return f"ip netns add fails here: {exc.stderr.strip()}"
    ip("netns", "del", name)
    return None


def kill_namespace_processes(ns: str) -> None:
    done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    for pid in done.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


@pytest.fixture
def two_nodes(request):
    """Two namespaces joined by a veth pair: (namespace, address) of node 0 and node 1."""
    why_not = netns_works()
    if why_not:
        pytest.skip(why_not)
    tag = f"{os.getpid() % 100000}"
    names = [f"sk{tag}n{i}" for i in (0, 1)]
    ends = [f"skv{tag}a", f"skv{tag}b"]

    def cleanup() -> None:
        for ns in names:
            kill_namespace_processes(ns)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for end in ends:  # gone with its namespace; left in the root one if setup stopped early
            subprocess.run(["ip", "link", "del", end], capture_output=True)

    request.addfinalizer(cleanup)
    nodes = []
    ip("link", "add", ends[0], "type", "veth", "peer", "name", ends[1])
    for i, (ns, end) in enumerate(zip(names, ends)):
        address = f"{SUBNET}.{i + 1}"
        ip("netns", "add", ns)
        ip("link", "set", end, "netns", ns)
        ip("-n", ns, "link", "set", end, "name", IFACE)
        ip("-n", ns, "addr", "add", f"{address}/24", "dev", IFACE)
        ip("-n", ns, "link", "set", IFACE, "up")
        ip("-n", ns, "link", "set", "lo", "up")
        nodes.append((ns, address))
    return nodes


def in_namespace(ns: str, *argv: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, timeout=timeout)


def namespace_pids(ns: str) -> list[str]:
    return subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
