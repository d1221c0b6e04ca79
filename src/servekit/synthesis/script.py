"""A plan as a shell script a person can paste: the text plan and ``plan --format sh``.

A ``Script`` is engine-neutral: comment lines, install steps, files to write, and one ``Part``
per machine or process (its env, the companions started before it, its command, the reasons).
``text_lines`` prints it for reading (every line a comment or a command, so it passes
``bash -n``); ``posix_script`` prints one ``set -eu`` POSIX script whose first argument picks
the part (``install`` runs the install steps).
"""

from __future__ import annotations

import re

from servekit.records import record
from servekit.synthesis.plan import InstallStep
from servekit.synthesis.shell import quote_expansions

_PLACEHOLDER = re.compile(r"\$\{?([A-Z][A-Z0-9_]*)")

PLACEHOLDERS: tuple[tuple[str, str, str], ...] = (
    ("HEAD_IP", "the address of the head node",
     "the head node's IP address that every other node can reach; on the head node: hostname -I | awk '{print $1}'"),
    ("NODE_IP", "the address of this node",
     "the IP address of the node this part runs on, on the network the nodes share (on that node: hostname -I)"),
    ("IFACE_NAME", "the network interface that carries the address of this node",
     "the network interface that carries that address (eth0, ens5, ib0); on each node: "
     "ip -o -4 addr show | awk '{print $2, $4}'"),
    ("MOONCAKE_MASTER_IP", "the address of the Mooncake master",
     "the IP address of the machine that runs mooncake_master (hostname -I there)"),
    ("MOONCAKE_CONFIG_PATH", "a path for the Mooncake config file",
     "where to write the Mooncake config file, e.g. /tmp/mooncake.json"),
    ("MOONCAKE_STORE_CONFIG_PATH", "a path for the Mooncake store config file",
     "where to write the Mooncake store config file, e.g. /tmp/mooncake_store.json"),
    ("MOONCAKE_DEVICE_NAME", "an RDMA device", "the RDMA device for transfers (ibv_devices lists them), e.g. mlx5_0"),
    ("MOONCAKE_STORE_DEVICE_NAME", "an RDMA device",
     "the RDMA device of the store (ibv_devices lists them), e.g. mlx5_0"),
    ("ROUTER_HOST", "the address the router listens on", "the address the router listens on, e.g. 0.0.0.0"),
    ("ROUTER_PORT", "the port of the router", "the port the router listens on, e.g. 8000"),
    ("PREFILL_NODE_N", "the address of prefill node N", "the IP address of prefill node N (hostname -I on that node)"),
    ("DECODE_NODE_N", "the address of decode node N", "the IP address of decode node N (hostname -I on that node)"),
    ("VLLM_INSTANCE_N", "the address of vLLM instance N",
     "the IP address of vLLM instance N (hostname -I on that machine)"),
    ("PREFILL_DP_RPC_PORT", "a free TCP port",
     "a free TCP port on the first prefill node for data-parallel RPC, e.g. 13345"),
    ("DECODE_DP_RPC_PORT", "a free TCP port",
     "a free TCP port on the first decode node for data-parallel RPC, e.g. 13345"),
    ("HF_TOKEN", "a Hugging Face access token",
     "a Hugging Face access token for gated models (https://huggingface.co/settings/tokens)"),
)
"""(name, what to set it to, how to find it) of each ``$NAME`` a plan leaves to the person. What to
set it to is said inside ``"${NAME:?...}"``, so it holds no quote, ``$``, backquote or brace."""
SOURCE_DIRECTIVE = "# shellcheck source=/dev/null"
"""Put before ``. .venv/bin/activate``: the install step makes that file, so shellcheck cannot read it."""
EXTRA_ARGS = '"$@"'
"""Closes each part's command in ``posix_script``: words after the part's name go to the command
(``sh plan.sh 1 --enforce-eager``)."""


@record
class Step:
    """A command started before a part's main command (a companion server, a compile step)."""

    title: str
    command: str
    background: bool = False
    with_env: bool = False
    """Run after the part's exports, so it starts with the part's env (Ray's head does)."""


@record
class Part:
    """What runs on one machine, or as one process: env, steps before, the command, why."""

    title: str
    command: str
    env: tuple[tuple[str, str, str], ...] = ()  # name, shell word, reason
    before: tuple[Step, ...] = ()
    why: tuple[str, ...] = ()
    activate: bool = False  # the install steps make a virtual environment to activate first


@record
class Install:
    """One install step; ``runs`` False shows it as a comment (the other form's step, or an
    optional one)."""

    kind: str
    command: str
    note: str | None = None
    runs: bool = True
    source: str | None = None
    """The page or recipe key the step follows."""
    label: str = ""
    """What the heading adds: why a step that is shown does not run."""

    @classmethod
    def of(cls, step: InstallStep, docker: bool) -> Install:
        """A plan's install step in the script of the docker form (``docker``) or the other."""
        runs = step.runs_in(docker)
        if step.optional:
            label = " (optional: run it by choice)"
        elif runs:
            label = ""
        else:
            label = " (the form without --docker)" if docker else " (the docker form: plan --docker)"
        return cls(step.kind, step.command, step.note, runs, step.source or None, label)


@record
class Script:
    header: tuple[str, ...]
    install: tuple[Install, ...]
    parts: tuple[Part, ...]
    files: tuple[tuple[str, str, str], ...] = ()  # title, path expression, content
    trailer: tuple[str, ...] = ()


def comment(text: str) -> list[str]:
    return [f"# {line}" if line else "#" for line in text.splitlines() or [""]]


def placeholder_names(texts: list[str], exported: set[str] = frozenset()) -> list[str]:
    """``$NAMES`` the texts use and nothing in the script sets, in first-use order."""
    names: list[str] = []
    for text in texts:
        for name in _PLACEHOLDER.findall(text):
            if name not in exported and name not in names:
                names.append(name)
    return names


def _placeholder(name: str) -> tuple[str, str] | None:
    """(what to set ``name`` to, how to find it); ``PREFILL_NODE_2`` reads the ``_N`` entry."""
    generic = re.sub(r"_[0-9]+$", "_N", name)
    for known, what, how in PLACEHOLDERS:
        if known == name:
            return what, how
        if known == generic:
            number = name.rsplit("_", 1)[-1]
            return re.sub(r"\bN\b", number, what), re.sub(r"\bN\b", number, how)
    return None


def explain_placeholder(name: str) -> str:
    found = _placeholder(name)
    return found[1] if found else "set it before running the commands below"


def _part_texts(part: Part) -> list[str]:
    return [part.command, *(s.command for s in part.before), *(value for _, value, _ in part.env)]


def _exported(part: Part) -> set[str]:
    """Names the part sets itself (``export NAME=$NAME`` passes a placeholder on; it sets nothing)."""
    return {name for name, value, _ in part.env if value not in (f"${name}", f"${{{name}}}")}


def _files_of(script: Script, part: Part) -> list[tuple[str, str, str]]:
    """The files a part reads: those whose path variable its command or env names."""
    texts = " ".join(_part_texts(part)) + " " + " ".join(name for name, _, _ in part.env)
    return [f for f in script.files if f[1].lstrip("$").strip("{}") in texts]


def script_placeholders(script: Script) -> list[str]:
    exported = {name for part in script.parts for name in _exported(part)}
    texts = [text for part in script.parts for text in _part_texts(part)]
    texts += [text for f in script.files for text in (f[1], f[2])]
    return placeholder_names(texts, exported)


def heredoc(path: str, content: str) -> list[str]:
    """Write ``content`` to ``path``; ``$NAMES`` in it expand unless it holds backslashes or backquotes."""
    marker = "'SERVEKIT_EOF'" if "\\" in content or "`" in content else "SERVEKIT_EOF"
    return [f'cat > "{path}" <<{marker}', content, "SERVEKIT_EOF"]


def _install_lines(script: Script) -> list[str]:
    lines: list[str] = []
    for step in script.install:
        lines.append(f"# install [{step.kind}]" + step.label)
        lines += step.command.splitlines() if step.runs else comment(step.command)
        if step.note:
            lines += comment(f"note: {step.note}")
        if step.source:
            lines += comment(f"source: {step.source}")
    return lines


def _file_lines(title: str, path: str, content: str) -> list[str]:
    return [f"## {title}", *heredoc(path, content)]


def _part_lines(part: Part) -> list[str]:
    lines = [f"## {part.title}", *_step_lines(part, with_env=False)]
    lines += [_export(name, value) + (f"  # {why}" if why and "\n" not in why else "")
              for name, value, why in part.env]
    lines += _step_lines(part, with_env=True)
    lines.append(quote_expansions(part.command))
    if part.why:
        lines.append("# why:")
        lines += [f"#   {line}" for why in part.why for line in why.splitlines()]
    return lines


def text_lines(script: Script) -> list[str]:
    """The script for reading: every line is a comment or a command."""
    lines = [line for h in script.header for line in comment(h)]
    lines += _install_lines(script)
    names = script_placeholders(script)
    if names:
        lines.append("# placeholders: set these first (export NAME=value)")
        lines += [f"#   ${name}: {explain_placeholder(name)}" for name in names]
    for title, path, content in script.files:
        lines += _file_lines(title, path, content)
    for part in script.parts:
        lines += _part_lines(part)
    lines += [_trailer_line(t) for t in script.trailer]
    return lines


def _trailer_line(text: str) -> str:
    return text if text.startswith("#") else "\n".join(comment(text))


def _posix(command: str) -> list[str]:
    """An install command in POSIX form (``source`` -> ``.``), each sourced file marked for shellcheck."""
    lines = []
    for line in re.sub(r"(?m)^source ", ". ", command).splitlines():
        if line.startswith(". "):
            lines.append(SOURCE_DIRECTIVE)
        lines.append(quote_expansions(line))
    return lines


def _function(name: str, body: list[str]) -> list[str]:
    """A shell function; a body of comments alone gets ``:`` (sh refuses an empty function)."""
    runs = any(line.strip() and not line.lstrip().startswith("#") for line in body)
    return [f"{name}() {{", *body, *([] if runs else [":"]), "}"]


def _guard(names: list[str]) -> list[str]:
    """``: "${HEAD_IP:?set HEAD_IP to the address of the head node ...}"``: stop with that message when unset."""
    lines = []
    for name in names:
        found = _placeholder(name)
        what = f"to {found[0]}" if found else "first"
        lines.append(f': "${{{name}:?set {name} {what} (see the placeholders at the top of this script)}}"')
    return lines


def _part_body(script: Script, part: Part) -> list[str]:
    files = _files_of(script, part)
    names = placeholder_names(_part_texts(part) + [text for f in files for text in (f[1], f[2])], _exported(part))
    body = _guard(names)
    if part.activate:
        body += [SOURCE_DIRECTIVE, "if [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi"]
    for _, path, content in files:
        body += heredoc(path, content)
    body += _step_lines(part, with_env=False)
    body += [_export(name, value) for name, value, _ in part.env]
    body += _step_lines(part, with_env=True)
    return body + [f"{quote_expansions(part.command)} {EXTRA_ARGS}"]


def _step_lines(part: Part, *, with_env: bool) -> list[str]:
    """The part's steps that run before its exports (or, ``with_env``, after them)."""
    return [line for step in part.before if step.with_env == with_env
            for line in (*comment(step.title), quote_expansions(step.command) + (" &" if step.background else ""))]


def _export(name: str, value: str) -> str:
    return quote_expansions(f"export {name}={value}")


def posix_script(script: Script) -> str:
    """One POSIX shell script: ``sh plan.sh install``, then ``sh plan.sh RANK`` on each machine."""
    many = len(script.parts) > 1
    lines = ["#!/bin/sh", *(line for h in script.header for line in comment(h))]
    names = script_placeholders(script)
    if names:
        lines.append("# placeholders: export these before running a part")
        lines += [f"#   ${name}: {explain_placeholder(name)}" for name in names]
    usage = "install" + "".join(f" | {i} ({p.title})" for i, p in enumerate(script.parts))
    lines += ["set -eu", ""]
    install = [line for step in script.install if step.runs for line in _posix(step.command)]
    lines += _function("install", install)
    for i, part in enumerate(script.parts):
        lines += _function(f"part_{i}", _part_body(script, part))
    lines += ["usage() {", f"  echo \"usage: $0 {usage.replace(chr(34), '')} [ARGS for its command]\" >&2",
              "  exit 2", "}"]
    lines += [f'part="${{1:-{"" if many else "0"}}}"', '[ "$#" -eq 0 ] || shift',
              'case "$part" in', "  install) install ;;"]
    lines += [f'  {i}) part_{i} "$@" ;;' for i in range(len(script.parts))]
    lines += ["  *) usage ;;", "esac"]
    lines += [_trailer_line(t) for t in script.trailer]
    return "\n".join(lines) + "\n"
