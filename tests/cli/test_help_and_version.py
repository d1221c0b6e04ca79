"""Every command and subcommand explains itself; the root knows its version and completion."""

from __future__ import annotations

import typer

from servekit import __version__
from servekit.cli.app import build_app, main
from servekit.cli.typer_app import COMMAND_MODULES


def _commands(group, path=()):
    """(argv path, click command) of every command and subcommand under ``group``."""
    for name, command in sorted(getattr(group, "commands", {}).items()):
        yield (*path, name), command
        yield from _commands(command, (*path, name))


def help_problems(capsys) -> list[str]:
    """What is missing from the help of every command and subcommand, one line each."""
    root = typer.main.get_command(build_app(None))
    found = list(_commands(root))
    assert {path[0] for path, _ in found} >= set(COMMAND_MODULES)
    problems = []
    for path, command in found:
        where = f"servekit {' '.join(path)}"
        code = main([*path, "--help"])
        out = capsys.readouterr().out
        described = (command.help or command.short_help or "").strip()
        if code != 0 or not described or described.split("\n")[0][:30] not in out:
            problems.append(f"{where}: --help exit {code}, description {described[:30]!r}")
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden and param.name != "help":
                if not (param.help or "").strip():
                    problems.append(f"{where} {param.opts[0]}: no help text")
    return problems


def test_every_command_and_subcommand_has_help(capsys):
    problems = help_problems(capsys)
    assert not problems, "\n".join(problems)


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"servekit {__version__}"


def test_shell_completion_is_offered(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--install-completion" in out and "--show-completion" in out
