"""How a plan's per-machine placeholders become values a pod knows by itself.

A plan for people prints ``$HEAD_IP``, ``$IFACE_NAME``, ``$PREFILL_NODE_1`` ... for someone to
fill in per machine. In a pod they are bound as follows (``SUBSTITUTIONS`` says the same as data):

* argv: a node address becomes a Kubernetes ``$(VAR)`` reference, expanded by the kubelet from
  the container's own environment before the process starts, so the container's
  ``command + args`` stay the plan's exact argv with only those tokens replaced. Inside a
  LeaderWorkerSet group the head is ``$(LWS_LEADER_ADDRESS)`` (set by the LeaderWorkerSet
  controller in every container of the group); a pod on its own uses ``$(POD_IP)`` (downward API).
* a DP RPC port placeholder becomes ``$(NAME)`` with ``NAME`` defined in the container env.
* env values: ``$IFACE_NAME`` becomes the pod's interface name; a process's own node address
  becomes ``valueFrom: fieldRef: status.podIP``; a config-file path becomes its mount path.
* a worker's node rank: workers of one group share one template, so a token that is the rank
  becomes ``$(LWS_WORKER_INDEX)``; a token that is a multiple of the rank (a data-parallel start
  rank) needs arithmetic, and only then the template runs ``/bin/sh -c 'exec ...'`` with
  ``$((LWS_WORKER_INDEX * k))`` for that token. ``resolve_command`` replays all of this.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from servekit.errors import ServekitError
from servekit.records import record

PLACEHOLDER = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
NODE_ADDRESS = re.compile(r"^(?:HEAD_IP|VLLM_INSTANCE_(\d+)|([A-Z]+)_NODE_(\d+))$")
DP_RPC_PORT = re.compile(r"^[A-Z]+_DP_RPC_PORT$")
K8S_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
SHELL_PRODUCT = re.compile(r"^\$\(\(LWS_WORKER_INDEX \* (\d+)\)\)$")
LEADER_ADDRESS = "LWS_LEADER_ADDRESS"
WORKER_INDEX = "LWS_WORKER_INDEX"
GROUP_SIZE = "LWS_GROUP_SIZE"
POD_IP = "POD_IP"
SHELL = ("/bin/sh", "-c")

SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    ("$HEAD_IP (argv)", "$(LWS_LEADER_ADDRESS)"),
    ("$<POOL>_NODE_1, $VLLM_INSTANCE_1 (argv)", "$(LWS_LEADER_ADDRESS) in a group, else $(POD_IP)"),
    ("$<POOL>_DP_RPC_PORT (argv)", "$(<POOL>_DP_RPC_PORT), defined in the container env"),
    ("worker --node-rank <r>", "$(LWS_WORKER_INDEX)"),
    ("worker --data-parallel-start-rank <r*k>", "/bin/sh -c 'exec ... $((LWS_WORKER_INDEX * k)) ...'"),
    ("$IFACE_NAME (env)", "the pod interface (K8sOptions.network_interface)"),
    ("own node address (env)", "valueFrom.fieldRef status.podIP"),
)


@record
class Scope:
    """Where one process runs: its node number (1-based) and whether it is in an LWS group."""

    node: int = 1
    in_group: bool = False
    network_interface: str = "eth0"
    ports: Mapping[str, str] = field(default_factory=dict)
    paths: Mapping[str, str] = field(default_factory=dict)


def _unbound(name: str, where: str) -> ServekitError:
    return ServekitError(f"placeholder ${name} in {where} has no Kubernetes binding",
                         fix="report the plan (model, hardware, strategy) so servekit learns to bind it")


def _argv_binding(name: str, scope: Scope) -> str:
    match = NODE_ADDRESS.match(name)
    if match:
        number = int(match.group(1) or match.group(3) or 1)
        if number != 1:
            raise _unbound(name, "argv")
        return f"$({LEADER_ADDRESS})" if scope.in_group else f"$({POD_IP})"
    if DP_RPC_PORT.match(name) and name in scope.ports:
        return f"$({name})"
    if name in scope.paths:
        return scope.paths[name]
    raise _unbound(name, "argv")


def bind_argv(argv: Sequence[Any], scope: Scope) -> list[str]:
    """The plan's argv with every placeholder bound for a pod (see the module docstring)."""
    return [PLACEHOLDER.sub(lambda m: _argv_binding(m.group(1), scope), str(token)) for token in argv]


def _env_value(name: str, value: str, scope: Scope) -> dict[str, Any]:
    whole = PLACEHOLDER.fullmatch(value)
    if whole:
        match = NODE_ADDRESS.match(whole.group(1))
        if match and int(match.group(1) or match.group(3) or 1) == scope.node:
            return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}

    def bind(m: re.Match) -> str:
        key = m.group(1)
        if key == "IFACE_NAME":
            return scope.network_interface
        if key in scope.paths:
            return scope.paths[key]
        if key in scope.ports:
            return scope.ports[key]
        raise _unbound(key, f"env {name}")

    return {"name": name, "value": PLACEHOLDER.sub(bind, value)}


def bind_env(env: Mapping[str, Any], scope: Scope) -> list[dict[str, Any]]:
    """Container env entries: the plan's env bound, then POD_IP and the DP RPC ports it uses."""
    out = [{"name": POD_IP, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    out += [{"name": key, "value": value} for key, value in scope.ports.items()]
    taken = {entry["name"] for entry in out}
    out += [_env_value(key, _text(value), scope) for key, value in env.items() if key not in taken]
    return out


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def substitute(text: str, values: Mapping[str, str], where: str) -> str:
    """Replace ``$NAME`` placeholders in a command string with literal values."""
    def bind(m: re.Match) -> str:
        if m.group(1) not in values:
            raise _unbound(m.group(1), where)
        return values[m.group(1)]

    return PLACEHOLDER.sub(bind, text)


def _rank_token(tokens: Sequence[str], ranks: Sequence[int]) -> str:
    """One argv position across worker ranks -> a literal, $(LWS_WORKER_INDEX) or $((... * k))."""
    if len(set(tokens)) == 1:
        return tokens[0]
    if all(t == str(r) for t, r in zip(tokens, ranks)):
        return f"$({WORKER_INDEX})"
    if all(t.isdigit() for t in tokens) and int(tokens[0]) % ranks[0] == 0:
        step = int(tokens[0]) // ranks[0]
        if all(int(t) == step * r for t, r in zip(tokens, ranks)):
            return f"$(({WORKER_INDEX} * {step}))"
    raise ServekitError(f"worker commands differ in a way one LeaderWorkerSet template cannot express: {tokens}",
                        fix="use a single-node strategy or fewer nodes")


def worker_template(argvs: Sequence[Sequence[str]], ranks: Sequence[int]) -> list[str]:
    """One container command for every worker rank (already bound argvs, same length)."""
    if len({len(a) for a in argvs}) != 1:
        raise ServekitError("worker commands differ in length across ranks; one template cannot run them all",
                            fix="use a single-node strategy or fewer nodes")
    tokens = [_rank_token(column, ranks) for column in zip(*argvs)]
    if not any(SHELL_PRODUCT.match(t) for t in tokens):
        return tokens
    script = " ".join(f'"{t}"' if SHELL_PRODUCT.match(t) else shlex.quote(t) for t in tokens)
    return [*SHELL, f"exec {script}"]


def _container_env(container: Mapping[str, Any], pod: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in pod.items() if k in (LEADER_ADDRESS, WORKER_INDEX, GROUP_SIZE)}
    for entry in container.get("env") or ():
        if "value" in entry:
            env[entry["name"]] = expand_refs(entry["value"], env)
        elif (entry.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") == "status.podIP":
            env[entry["name"]] = pod[POD_IP]
    return env


def expand_refs(text: str, env: Mapping[str, str]) -> str:
    """The kubelet's ``$(VAR)`` expansion: defined names are replaced, ``$$`` escapes, others stay."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$")
            i += 2
            continue
        match = K8S_REF.match(text, i)
        if match and match.group(1) in env:
            out.append(env[match.group(1)])
            i = match.end()
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def resolve_command(container: Mapping[str, Any], pod: Mapping[str, str]) -> list[str]:
    """The argv a container really executes, given its pod's values (``POD_IP`` and, in a
    LeaderWorkerSet, ``LWS_LEADER_ADDRESS`` / ``LWS_WORKER_INDEX`` / ``LWS_GROUP_SIZE``)."""
    env = _container_env(container, pod)
    tokens = [expand_refs(t, env) for t in [*(container.get("command") or ()), *(container.get("args") or ())]]
    if tuple(tokens[:2]) != SHELL or len(tokens) != 3 or not tokens[2].startswith("exec "):
        return tokens
    index = int(env.get(WORKER_INDEX, "0"))
    words = shlex.split(tokens[2][len("exec "):])
    return [_shell_word(w, index) for w in words]


def _shell_word(word: str, index: int) -> str:
    match = SHELL_PRODUCT.match(word)
    return str(index * int(match.group(1))) if match else word

