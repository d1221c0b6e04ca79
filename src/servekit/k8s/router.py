"""The router in front of prefill/decode pools or kv-store instances: Deployment + Service."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from servekit.k8s.placeholders import substitute
from servekit.k8s.pod import common_env, split_argv
from servekit.k8s.workloads import deployment, metadata, selector_labels, service

ROUTER_BIND = "0.0.0.0"


def command_argv(text: str, values: Mapping[str, str], where: str) -> list[str]:
    """A multi-line shell command of the catalog (comments, ``\\`` continuations) as argv."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = " ".join(line.rstrip().removesuffix("\\") for line in lines)
    return shlex.split(substitute(joined, values, where))


def install_then_run(install: str | None, argv: list[str]) -> list[str]:
    """argv as is, or ``/bin/sh -c '<install> && exec <argv>'`` when a package must come first."""
    if not install:
        return argv
    return ["/bin/sh", "-c", f"{system_install(install)} && exec {shlex.join(argv)}"]


def system_install(install: str) -> str:
    """A catalog install line for a container: no virtual environment there, so ``uv pip``
    installs into the image's system Python (``--system``)."""
    if install.startswith("uv pip install ") and "--system" not in install:
        return "uv pip install --system " + install[len("uv pip install "):]
    return install


def router_docs(router: Mapping[str, Any], hosts: Mapping[str, str], *, image: str, port: int,
                namespace: str, base: str) -> list[dict[str, Any]]:
    """Deployment + Service running the plan's router command with every backend bound."""
    values = {**hosts, "ROUTER_HOST": ROUTER_BIND, "ROUTER_PORT": str(port)}
    argv = command_argv(str(router["command"]), values, "the router command")
    name = f"{base}-router"
    main = {
        "name": "router", "image": image, **split_argv(install_then_run(router.get("install"), argv)),
        "env": common_env()[1:],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "readinessProbe": {"tcpSocket": {"port": port}, "periodSeconds": 10},
    }
    meta = metadata(name, namespace, base, "router")
    pod = {"containers": [main]}
    svc = service(metadata(name, namespace, base, "router"), selector_labels(base, "router"), port, "http")
    return [deployment(meta, pod), svc]
