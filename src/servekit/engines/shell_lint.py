"""Lint a shell line: every engine command in it, each under its own environment.

``nohup vllm serve m > log 2>&1 &`` is one ``vllm serve m``; ``cd x && vllm serve m`` lints
``vllm serve m`` and notes that ``cd x`` is not checked. A line whose one command no engine
recognizes is checked as the given (or guessed) engine's options, as a bare option list is; a
line of several commands none of which is an engine's is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from servekit.engines.common.findings import Finding, LintResult
from servekit.engines.common.shell_text import ShellCommand, split_shell_text, split_shell_words
from servekit.engines.registry import engines, get_engine
from servekit.errors import ServekitError

Guess = Callable[[list[str]], str]


def _recognized(command: ShellCommand) -> bool:
    return any(engine.recognizes(command.argv) for engine in engines())


def _ignored_note(command: ShellCommand) -> Finding:
    return Finding("note", "ignored-command",
                   f"`{command.text}` is not an engine command; it is not checked", location=None)


def lint_shell_commands(commands: Sequence[ShellCommand], engine: str | None, version: str | None,
                        guess: Guess) -> LintResult:
    """One result for the engine commands of a line; ``engine`` None: each command's own (``guess``)."""
    if not commands:
        raise ServekitError("nothing to check: the line runs no command",
                            fix="give the command, e.g. vllm serve MODEL")
    checked = [c for c in commands if _recognized(c)]
    if not checked:
        if len(commands) > 1:
            shown = "; ".join(f"`{c.text}`" for c in commands)
            raise ServekitError(f"no engine command in this line (it runs {shown})",
                                fix="lint the line that starts the engine, e.g. vllm serve MODEL ...")
        checked = list(commands)
    results = []
    for command in checked:
        argv = command.argv
        results.append(get_engine(engine or guess(argv)).lint(argv, version))
    notes = tuple(_ignored_note(c) for c in commands if c not in checked)
    first = results[0]
    if len(results) == 1:
        return LintResult(first.engine, first.version, first.argv, first.findings + notes)
    findings = tuple(_in_command(i, checked[i - 1], f) for i, r in enumerate(results, 1) for f in r.findings)
    argv = tuple(word for r in results for word in r.argv)
    return LintResult(first.engine, first.version, argv, findings + notes)


def _in_command(number: int, command: ShellCommand, finding: Finding) -> Finding:
    program = " ".join(command.words[:2])
    return Finding(finding.severity, finding.code, f"command {number} ({program}): {finding.message}",
                   finding.fix, finding.location)


def lint_shell_text(text: str, engine: str | None, version: str | None, guess: Guess) -> LintResult:
    """Lint a shell line written as one string (``\\`` line continuations allowed)."""
    return lint_shell_commands(split_shell_text(text), engine, version, guess)


def lint_shell_words(words: Sequence[str], engine: str | None, version: str | None, guess: Guess) -> LintResult:
    """Lint a line already split into words; one word holding a whole command line is read as shell text."""
    if len(words) == 1 and any(c.isspace() for c in words[0]):
        return lint_shell_text(words[0], engine, version, guess)
    return lint_shell_commands(split_shell_words(words), engine, version, guess)


def engine_command(words: Sequence[str]) -> list[str]:
    """The words of the one engine command in a line (given as words, or as one word of shell text):
    its environment as leading ``VAR=value`` words, redirections, ``nohup`` and other commands set
    aside. A line with no engine command, or with several, is an error."""
    if len(words) == 1 and any(c.isspace() for c in words[0]):
        commands = split_shell_text(words[0])
    else:
        commands = split_shell_words(words)
    found = [c for c in commands if _recognized(c)] or (commands if len(commands) == 1 else [])
    if len(found) != 1:
        shown = "; ".join(f"`{c.text}`" for c in commands) or "nothing"
        raise ServekitError(f"an upgrade check takes one engine command; this line runs {shown}",
                            fix="give the one command that starts the engine, e.g. vllm serve MODEL ...")
    return found[0].argv
