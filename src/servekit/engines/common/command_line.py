"""Command lines as engines see them: leading ``VAR=value`` words, ``docker run`` wrappers, and the
split into the engine sub-command whose flag catalog applies and the options it parses."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field

from servekit.errors import ServekitError
from servekit.records import record
from servekit.synthesis.images import ImageFacts, image_facts

_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@record
class EngineCommand:
    """A command line split into program part and option list."""

    command: str  # the engine sub-command whose catalog applies: "serve", "warm-cache", ...
    args: tuple[str, ...]  # what the sub-command's parser sees
    form: str = "bare"  # how it was launched: a program name, "vllm-serve", "api-server", "docker" or "bare"
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


@record
class DockerRun:
    """``docker run [OPTIONS] IMAGE [ARGS]`` taken apart."""

    options: tuple[str, ...]
    image: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    entrypoint: str | None = None

    def command(self, program: Sequence[str], images: Sequence[ImageFacts] = ()) -> tuple[str, ...]:
        """The command the container runs, where ``program`` is what the caller expects: an
        ``--entrypoint`` with the arguments; the arguments alone when they start with
        ``program`` or the image runs its command whole; else the image's entrypoint (an
        image no entry of ``servekit.synthesis.images`` or ``images`` names is taken to start ``program``)."""
        if self.entrypoint:
            return (self.entrypoint, *self.args)
        facts = image_facts(self.image, images)
        if tuple(self.args[:len(program)]) == tuple(program) or (facts is not None and facts.passes_command):
            return self.args
        return (*(facts.entrypoint if facts is not None else program), *self.args)

    def bind_mounts(self) -> dict[str, str]:
        """Container path -> host path of each ``-v HOST:CONTAINER[:MODE]``."""
        out: dict[str, str] = {}
        for i, word in enumerate(self.options):
            value = None
            if word in ("-v", "--volume") and i + 1 < len(self.options):
                value = self.options[i + 1]
            elif word.startswith(("-v=", "--volume=")):
                value = word.partition("=")[2]
            parts = (value or "").split(":")
            if len(parts) >= 2 and parts[1].startswith("/"):
                out[parts[1]] = parts[0]
        return out


def split_docker_run(argv: Sequence[str]) -> DockerRun | None:
    """None unless ``argv`` is a ``docker run`` command with an image."""
    if list(argv[:2]) != ["docker", "run"]:
        return None
    words = list(argv[2:])
    env: list[tuple[str, str]] = []
    entrypoint = None
    i = 0
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        takes_value = word in _DOCKER_VALUE_OPTIONS
        value = words[i + 1] if takes_value and i + 1 < len(words) else word.partition("=")[2]
        option = word.split("=", 1)[0]
        if option in ("-e", "--env") and "=" in value:
            name, _, val = value.partition("=")
            env.append((name, val))
        if option == "--entrypoint":
            entrypoint = value
        i += 2 if takes_value else 1
    if i >= len(words):
        return None
    return DockerRun(tuple(words[:i]), words[i], tuple(words[i + 1:]), tuple(env), entrypoint)


def option_value(args: Sequence[str], option: str) -> str | None:
    """The last value given as ``OPTION VALUE`` or ``OPTION=VALUE`` (None when absent)."""
    found = None
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            found = args[i + 1]
        elif arg.startswith(option + "="):
            found = arg[len(option) + 1:]
    return found


def looks_like_option(token: str) -> bool:
    """``--flag`` / ``-x`` start an option; ``-1`` or ``-0.5`` are values."""
    return token.startswith("-") and not _is_number(token)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def split_program_command(argv: Sequence[str], program: str, commands: Sequence[str]) -> EngineCommand:
    """``PROGRAM SUBCOMMAND ARGS`` (PROGRAM = ``program``), or bare options for the first sub-command."""
    env, rest = strip_env(argv)
    if rest[:1] == [program] and len(rest) > 1 and rest[1] in commands:
        return EngineCommand(rest[1], tuple(rest[2:]), program, env, tuple(rest[:2]))
    if rest[:1] == [program]:
        raise ServekitError(
            f"{program} command has no known sub-command",
            fix=f"use one of: {', '.join(f'{program} {c}' for c in commands)}",
        )
    return EngineCommand(commands[0], tuple(rest), "bare", env)
