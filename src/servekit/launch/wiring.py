"""A plan's processes bound to this machine: ports, placeholders, commands, readiness checks.

On one machine every node address (``$HEAD_IP``, ``$PREFILL_NODE_1``, ``$VLLM_INSTANCE_1``,
``$MOONCAKE_MASTER_IP``) is the run's host and ``$IFACE_NAME`` the loopback interface; each
engine server listens on a free port of its own, and the router's backend URLs, which name the
engine servers by the ports the plan gave them, are pointed at those; the router listens on the
run's port (``$ROUTER_HOST``, ``$ROUTER_PORT``); a data-parallel RPC port is a free port; a
config file the plan carries is written into the run's folder and its placeholder names that
path. A companion keeps the port the plan gives it (its engines name that port inside their own
options). A plan spread over several nodes (a pool's follower nodes, multi-node workers) does not
run on one machine.

The result is a list of stages started in order, companions, then engines, then the router;
the processes of one stage start together.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Protocol

from servekit.engines.companions import program_of
from servekit.errors import ServekitError
from servekit.k8s.placeholders import DP_RPC_PORT, NODE_ADDRESS, PLACEHOLDER
from servekit.launch.launch_plan import COMPANION, ENGINE, ROUTER, START_ORDER, LaunchPlan, LaunchProcess
from servekit.launch.phases import PhaseMatcher
from servekit.records import record

ONE_MACHINE_ROLES = ("serve", "prefill", "decode")
"""Engine roles that run on one machine; others (``worker``, ``prefill_node`` ...) are further nodes."""
LOOPBACK_INTERFACE = "lo"
MACHINE_ADDRESSES = ("MOONCAKE_MASTER_IP",)
"""Placeholders naming a machine's address that are not node addresses of a pool."""
URL = re.compile(r"^(https?://[^/:]+):(\d+)(.*)$")


class Programs(Protocol):
    """Where the commands come from: the engine's environment and the companions' own."""

    def engine_command(self, process: LaunchProcess, host: str, port: int) -> tuple[str, ...]: ...

    def engine_env(self, env: Mapping[str, str], host: str) -> dict[str, str]: ...

    def program(self, word: str) -> str: ...

    def engine_check(self, url: str) -> str: ...

    def engine_phases(self) -> PhaseMatcher: ...


@record
class Bound:
    """One process bound to this machine: the command and env it runs with, the URL it serves
    (None for a companion that speaks no HTTP), its readiness check (``Watch.check``), its phases."""

    role: str
    kind: str
    command: tuple[str, ...]
    env: dict[str, str]
    url: str | None
    check: str
    phases: PhaseMatcher = field(default_factory=lambda: PhaseMatcher(()))


@record
class Wiring:
    stages: tuple[tuple[Bound, ...], ...]
    files: tuple[tuple[Path, str], ...]
    url: str
    """The run's endpoint: the router's URL when there is one, else the engine server's."""


def further_nodes(plan: LaunchPlan) -> list[str]:
    """What places the plan on more than one machine: engine roles of further nodes, and node
    addresses numbered past the first (``$PREFILL_NODE_2``, ``$VLLM_INSTANCE_2``)."""
    found = [p.role for p in plan.engines if p.role not in ONE_MACHINE_ROLES]
    for process in plan.processes:
        for word in (*process.argv, *process.env.values()):
            for match in PLACEHOLDER.finditer(str(word)):
                node = NODE_ADDRESS.match(match.group(1))
                if node and int(node.group(1) or node.group(3) or 1) > 1:
                    found.append(f"${match.group(1)}")
    return sorted(set(found))


def check_one_machine(plan: LaunchPlan) -> None:
    """A plan whose processes belong on several machines is an error that says so."""
    others = further_nodes(plan)
    if others:
        raise ServekitError(f"this plan spans several machines ({', '.join(others)}); "
                            "`up` starts the processes of one machine",
                            fix="choose a one-machine layout (--strategy, or --nodes 1), or print the commands "
                                "with --dry-run and start each on its machine")


def option_value(words: Sequence[str], option: str) -> str | None:
    """The value of ``option`` in ``words`` (``--opt V``, ``--opt=V``, ``-opt=V``), last one wins."""
    found = None
    for i, word in enumerate(words):
        if word == option and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith(option + "="):
            found = word.split("=", 1)[1]
    return found


def set_option(words: Sequence[str], option: str, value: str) -> list[str]:
    """``words`` with ``option`` set to ``value`` (replaced where present, else appended)."""
    out, i, done = [], 0, False
    while i < len(words):
        word = words[i]
        if word == option and i + 1 < len(words):
            out += [option, value]
            i, done = i + 2, True
            continue
        if word.startswith(option + "="):
            out.append(f"{option}={value}")
            i, done = i + 1, True
            continue
        out.append(word)
        i += 1
    return out if done else [*out, option, value]


def bind_text(text: str, values: Mapping[str, str], where: str) -> str:
    """``$NAME`` placeholders replaced by their values here; one without a value is an error."""
    def bind(match: re.Match) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        if name in os.environ:
            return os.environ[name]
        raise ServekitError(f"placeholder ${name} in {where} has no value on this machine",
                            fix=f"export {name}=... before servekit up")
    return PLACEHOLDER.sub(bind, text)


def placeholder_values(plan: LaunchPlan, host: str, router_port: int, folder: Path,
                       free_port) -> dict[str, str]:
    """The value of every placeholder the plan's processes and files name, on this machine."""
    texts = [w for p in plan.processes for w in (*p.argv, *p.env.values())] + [c for _, c in plan.files]
    names = {m.group(1) for text in texts for m in PLACEHOLDER.finditer(str(text))}
    values = {"IFACE_NAME": LOOPBACK_INTERFACE, "ROUTER_HOST": host, "ROUTER_PORT": str(router_port)}
    values.update({name: str(folder / f"{name.lower()}.json") for name, _ in plan.files})
    for name in sorted(names):
        if NODE_ADDRESS.match(name) or name in MACHINE_ADDRESSES:
            values[name] = host
        elif DP_RPC_PORT.match(name):
            values[name] = str(free_port())
    return values


def retarget(words: Sequence[str], ports: Mapping[int, int]) -> list[str]:
    """Backend URLs (``http://HOST:PLANNED``) pointed at the port each engine server really got."""
    out = []
    for word in words:
        match = URL.match(word)
        if match and int(match.group(2)) in ports:
            word = f"{match.group(1)}:{ports[int(match.group(2))]}{match.group(3)}"
        out.append(word)
    return out


def _companion(process: LaunchProcess, words: list[str], env: dict[str, str], host: str,
               programs: Programs) -> Bound:
    program = program_of(words[0]) if words else None
    if program is None:
        raise ServekitError(f"{process.role}: servekit has no pinned program {words[0] if words else '(none)'!r}",
                            fix="start it yourself, or choose a plan without it")
    port = option_value(words, program.port_option) if program.port_option else None
    if port is None:
        raise ServekitError(f"{process.role}: its command gives no {program.port_option or 'port'}, so servekit "
                            "cannot tell when it is ready", fix="add the option to its command in the catalog")
    command = (programs.program(words[0]), *words[1:])
    url = f"http://{host}:{port}" if program.readiness_path else None
    check = f"{url}{program.readiness_path}" if url else f"tcp://{host}:{port}"
    return Bound(process.role, COMPANION, command, env, url, check)


def _router(process: LaunchProcess, words: list[str], env: dict[str, str], host: str, port: int,
            programs: Programs, free_port) -> Bound:
    program = program_of(words[0]) if words else None
    if program is None:
        raise ServekitError(f"the router program {words[0] if words else '(none)'!r} is not one servekit pins",
                            fix="choose a plan with vllm-router")
    if program.host_option:
        words = set_option(words, program.host_option, host)
    words = set_option(words, program.port_option or "--port", str(port))
    if program.metrics_port_option and option_value(words, program.metrics_port_option) is None:
        words = set_option(words, program.metrics_port_option, str(free_port()))
    url = f"http://{host}:{port}"
    return Bound(process.role, ROUTER, (programs.program(words[0]), *words[1:]), env, url,
                 f"{url}{program.readiness_path or '/health'}")


def wire(plan: LaunchPlan, host: str, port: int, folder: Path, programs: Programs, free_port) -> Wiring:
    """Bind every process of ``plan`` to this machine; ``port`` is the run's endpoint port."""
    check_one_machine(plan)
    has_router = any(p.kind == ROUTER for p in plan.processes)
    engine_ports = {p.role: (free_port() if has_router or i else port) for i, p in enumerate(plan.engines)}
    planned = {p.port: engine_ports[p.role] for p in plan.engines if p.port}
    values = placeholder_values(plan, host, port, folder, free_port)
    bound: dict[str, list[Bound]] = {kind: [] for kind in START_ORDER}
    for process in plan.processes:
        where = f"the {process.role} command"
        env = {k: bind_text(str(v), values, f"the env of {process.role}") for k, v in process.env.items()}
        if process.kind == ENGINE:
            bound[ENGINE].append(_engine(process, env, host, engine_ports[process.role], programs))
            continue
        words = retarget([bind_text(w, values, where) for w in process.argv], planned)
        if process.kind == ROUTER:
            bound[ROUTER].append(_router(process, words, env, host, port, programs, free_port))
        else:
            bound[COMPANION].append(_companion(process, words, env, host, programs))
    files = tuple((Path(values[name]), bind_text(content, values, f"the file ${name}")) for name, content in plan.files)
    stages = tuple(tuple(bound[kind]) for kind in START_ORDER if bound[kind])
    endpoint = (bound[ROUTER] or bound[ENGINE])[0].url or ""
    return Wiring(stages, files, endpoint)


def _engine(process: LaunchProcess, env: dict[str, str], host: str, port: int, programs: Programs) -> Bound:
    command = programs.engine_command(process, host, port)
    url = f"http://{host}:{port}"
    return Bound(process.role, ENGINE, command, programs.engine_env(env, host), url, programs.engine_check(url), programs.engine_phases())
