"""The checks of a plan as the builder page shows them: numbered, each beside what it is about.

The findings are the ones ``servekit plan`` reports (its JSON ``checks``: the flag lint of each
process, the deployment checks, the fit check; a translated plan's own findings), read as they
are. A flag finding names its option, and the page marks the line of the command that carries it;
a deployment finding belongs to the docker form; a fit finding to the memory chart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from servekit.records import record

KINDS = {"flags": "flags", "deploy": "deployment", "fit": "fit", "engine": "engine", "docker-flags": "flags (docker)"}
"""Kind of check -> how the page names it."""


@record
class Check:
    number: int
    kind: str
    severity: str
    code: str
    message: str
    fix: str
    role: str
    rank: int
    option: str = ""
    release: str = ""

    @property
    def docker(self) -> bool:
        return self.kind in ("deploy", "docker-flags")

    @property
    def where(self) -> str:
        rank = f" rank {self.rank}" if self.rank else ""
        option = f" {self.option}" if self.option else ""
        return f"{KINDS.get(self.kind, self.kind)}, {self.role}{rank}{option}"


def _check(kind: str, finding: dict[str, Any], role: Any, rank: Any) -> Check:
    return Check(0, kind, str(finding.get("severity") or "note"), str(finding.get("code") or ""),
                 str(finding.get("message") or ""), str(finding.get("fix") or ""), str(role or ""),
                 int(rank or 0), str(finding.get("option") or ""), str(finding.get("release") or ""))


def _per_process(kind: str, entries: Iterable[dict[str, Any]] | None) -> list[Check]:
    return [_check(kind, f, e.get("role"), e.get("rank")) for e in entries or () for f in e.get("findings") or ()]


def all_checks(checks: dict[str, Any] | None, docker: dict[str, Any] | None,
               engine_commands: Sequence[dict[str, Any]] | None) -> tuple[Check, ...]:
    """Every finding of the plan (``checks``), of its docker form (``docker``: the plan checked
    as it runs in its container) and of a translated plan's commands, each once, numbered."""
    found = _per_process("flags", (checks or {}).get("flags"))
    found += [_check("deploy", f, f.get("role"), f.get("rank")) for f in (checks or {}).get("deploy") or ()]
    found += _per_process("docker-flags", (docker or {}).get("flags"))
    found += [_check("deploy", f, f.get("role"), f.get("rank")) for f in (docker or {}).get("deploy") or ()]
    found += [_check("fit", f, r.get("role"), 0) for r in (checks or {}).get("fit") or () for f in r.get("findings") or ()]
    found += _per_process("engine", engine_commands)
    seen: set[tuple[str, str, str, str, int]] = set()
    out: list[Check] = []
    for check in found:
        key = ("flags" if check.kind == "docker-flags" else check.kind, check.code, check.message, check.role,
               check.rank)
        if key not in seen:  # the docker form's checks repeat the native ones where the same release runs
            seen.add(key)
            out.append(replace(check, number=len(out) + 1))
    return tuple(out)


def _process_key(role: str, rank: int) -> str:
    """The key of the command block of one process (``plan_sections.command_blocks``)."""
    if role == "serve":
        return "command"
    if role == "worker":
        return f"worker-{rank + 1}"
    return f"{role.replace('_', '-')}-{rank}" if rank else role


def _block_process(block_key: str) -> tuple[str, bool]:
    """(the process key, whether the block is a docker form) of a command block."""
    if block_key == "docker-command":
        return "command", True
    for suffix in ("-docker-command", "-docker"):
        if block_key.endswith(suffix):
            return block_key.removesuffix(suffix), True
    if block_key.startswith("worker-docker-"):
        return "worker-" + block_key.removeprefix("worker-docker-"), True
    return block_key, False


def _option_of(line: str) -> str:
    word = line.strip().split(" ", 1)[0]
    return word.split("=", 1)[0] if word.startswith("--") else ""


def attach(block_key: str, text: str, checks: Sequence[Check]) -> tuple[list[tuple[str, tuple[int, ...]]], tuple[Check, ...]]:
    """(each line of ``text`` with the numbers of the checks about it, the checks about this block)."""
    process, docker = _block_process(block_key)
    mine = tuple(c for c in checks if c.kind != "fit" and c.docker == docker
                 and (_process_key(c.role, c.rank) == process or (c.role == "container" and docker)))
    lines = []
    for line in text.split("\n"):
        option = _option_of(line)
        lines.append((line, tuple(c.number for c in mine if option and c.option == option)))
    return lines, mine
