"""The processes a plan starts beside its engine servers, as ``LaunchProcess`` entries: the
router in front of prefill/decode pools or KV-store instances, a feature's companion server (the
LMCache server), Mooncake's master and store; and the files they read (Mooncake's configs).

Their argv is the catalog's command split into words with its ``$PLACEHOLDERS`` kept; binding
them to one machine is ``servekit.launch.wiring``'s work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from servekit.k8s.mooncake import parts as mooncake_parts
from servekit.k8s.placeholders import PLACEHOLDER
from servekit.k8s.router import command_argv
from servekit.launch.launch_plan import COMPANION, ROUTER, LaunchProcess
from servekit.synthesis.plan import Plan

CONFIG_FILES = (("MOONCAKE_CONFIG_PATH", "mooncake_config"), ("MOONCAKE_STORE_CONFIG_PATH", "store"))
"""Placeholder naming a Mooncake config file's path, and the plan key holding its content."""


def catalog_words(text: str, where: str) -> tuple[str, ...]:
    """A catalog shell command (comment lines, ``\\`` continuations) as words, ``$NAME`` kept."""
    keep = {m.group(1): f"${m.group(1)}" for m in PLACEHOLDER.finditer(text)}
    return tuple(command_argv(text, keep, where))


def role_name(label: str) -> str:
    """``LMCache Server`` -> ``lmcache-server``: a role name for logs and records."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "companion"


def router_process(plan: Plan) -> LaunchProcess | None:
    router = dict(plan.router or ())
    if not router.get("command"):
        return None
    port = router.get("port")
    return LaunchProcess("router", catalog_words(str(router["command"]), "the router command"), {}, (), ROUTER,
                         int(port) if port else None)


def _feature_companions(plan: Plan) -> list[LaunchProcess]:
    out = []
    for entry in plan.extra("companions") or ():
        label = str(entry.get("label") or entry.get("feature") or "companion")
        words = catalog_words(str(entry["command"]), f"the {label} command")
        out.append(LaunchProcess(role_name(label), words, {}, (), COMPANION))
    return out


def _mooncake(spec: Mapping[str, Any]) -> list[LaunchProcess]:
    master = str((spec.get("master") or {}).get("command") or "mooncake_master")
    out = [LaunchProcess("mooncake-master", catalog_words(master, "the Mooncake master command"), {}, (), COMPANION)]
    store = spec.get("store") or {}
    if store.get("command"):
        words = catalog_words(str(store["command"]), "the Mooncake store command")
        out.append(LaunchProcess("mooncake-store", words, {}, (), COMPANION))
    return out


def companion_processes(plan: Plan) -> list[LaunchProcess]:
    """Every companion the plan starts before its engine servers, in the order they start."""
    spec = mooncake_parts(dict(plan.passthrough))
    return _feature_companions(plan) + (_mooncake(spec) if spec else [])


def plan_files(plan: Plan) -> tuple[tuple[str, str], ...]:
    """(path placeholder, JSON content) of each config file the plan's processes read."""
    spec = mooncake_parts(dict(plan.passthrough))
    if not spec:
        return ()
    out = []
    for name, key in CONFIG_FILES:
        content = spec.get(key)
        if key == "store":
            content = (content or {}).get("config")
        if content:
            out.append((name, json.dumps(content, indent=2)))
    return tuple(out)
