"""Mooncake for kv-store plans: the master, the standalone store, and the shared config file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from servekit.k8s.placeholders import substitute
from servekit.k8s.router import command_argv, install_then_run
from servekit.k8s.workloads import config_map, deployment, metadata, selector_labels, service

MASTER_PORT = 50051
CONFIG_DIR = "/etc/mooncake"
CONFIG_PATH = f"{CONFIG_DIR}/mooncake.json"
STORE_CONFIG_PATH = f"{CONFIG_DIR}/store.json"
CONFIG_VOLUME = "mooncake-config"


def parts(plan_extra: Mapping[str, Any]) -> dict[str, Any] | None:
    """master / store / vLLM-side config / install of a plan that uses Mooncake, else None."""
    if plan_extra.get("master"):
        return {k: plan_extra.get(k) for k in ("master", "store", "mooncake_config", "install")}
    nested = plan_extra.get("mooncake")
    return dict(nested) if isinstance(nested, Mapping) else None


def values(base: str, namespace: str) -> dict[str, str]:
    """Bindings of the Mooncake placeholders: the master's Service, config paths, NICs left to Mooncake."""
    return {"MOONCAKE_MASTER_IP": f"{base}-mooncake-master.{namespace}", "MOONCAKE_CONFIG_PATH": CONFIG_PATH,
            "MOONCAKE_STORE_CONFIG_PATH": STORE_CONFIG_PATH, "MOONCAKE_DEVICE_NAME": "",
            "MOONCAKE_STORE_DEVICE_NAME": ""}


def _bound(data: Any, bindings: Mapping[str, str]) -> Any:
    if isinstance(data, str):
        return substitute(data, bindings, "the Mooncake config")
    if isinstance(data, Mapping):
        return {k: _bound(v, bindings) for k, v in data.items()}
    if isinstance(data, list):
        return [_bound(v, bindings) for v in data]
    return data


def config_volume(base: str) -> dict[str, Any]:
    return {"name": CONFIG_VOLUME, "configMap": {"name": f"{base}-mooncake"}}


def config_mount() -> dict[str, Any]:
    return {"name": CONFIG_VOLUME, "mountPath": CONFIG_DIR, "readOnly": True}


def _process(name: str, component: str, argv: list[str], *, image: str, install: str | None, port: int | None,
             namespace: str, base: str, mounts: bool = False) -> list[dict[str, Any]]:
    main: dict[str, Any] = {"name": component, "image": image}
    main.update(zip(("command", "args"), _split(install_then_run(install, argv))))
    if port:
        main["ports"] = [{"name": "rpc", "containerPort": port, "protocol": "TCP"}]
    pod: dict[str, Any] = {"containers": [main]}
    if mounts:
        main["volumeMounts"] = [config_mount()]
        pod["volumes"] = [config_volume(base)]
    docs = [deployment(metadata(name, namespace, base, component), pod)]
    if port:
        docs.append(service(metadata(name, namespace, base, component), selector_labels(base, component), port, port))
    return docs


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    if argv[:2] == ["/bin/sh", "-c"]:
        return argv[:2], argv[2:]
    return argv[:1], argv[1:]


def mooncake_docs(spec: Mapping[str, Any], *, image: str, namespace: str, base: str) -> list[dict[str, Any]]:
    """ConfigMap (vLLM and store configs), master Deployment + Service, store Deployment if any."""
    bindings = values(base, namespace)
    data = {"mooncake.json": json.dumps(_bound(spec.get("mooncake_config") or {}, bindings), indent=2)}
    store = spec.get("store") or None
    if store and store.get("config"):
        data["store.json"] = json.dumps(_bound(store["config"], bindings), indent=2)
    docs = [config_map(metadata(f"{base}-mooncake", namespace, base, "mooncake-config"), data)]
    master = command_argv(str((spec.get("master") or {}).get("command") or "mooncake_master"), bindings,
                          "the Mooncake master command")
    install = spec.get("install")
    docs += _process(f"{base}-mooncake-master", "mooncake-master", master, image=image, install=install,
                     port=MASTER_PORT, namespace=namespace, base=base)
    if store and store.get("command"):
        argv = command_argv(str(store["command"]), bindings, "the Mooncake store command")
        docs += _process(f"{base}-mooncake-store", "mooncake-store", argv, image=image, install=install,
                         port=None, namespace=namespace, base=base, mounts=True)
    return docs
