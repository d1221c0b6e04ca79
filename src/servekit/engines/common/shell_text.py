"""A shell line as the shell reads it: the simple commands it runs, each with its own environment.

``split_shell_text("export X=1 && nohup vllm serve m > log 2>&1 &")`` gives one command,
``vllm serve m`` with ``X=1`` in its environment. Commands are separated by ``&&``, ``||``, ``;``,
``|``, ``&`` and newlines; redirections (``> log``, ``2>&1``, ``>> log``, ``< in``, ``&> log``)
are dropped; leading ``nohup``, ``exec``, ``time``, ``env`` and ``VAR=value`` words are taken off
(the assignments become the command's environment), and ``export VAR=value`` statements add to
the environment of the commands after them. ``split_shell_words`` does the same for a command
already split into words (operators stand as words of their own there).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field

from servekit.errors import ServekitError
from servekit.records import record

SEPARATORS = ("&&", "||", ";;", ";", "|&", "|", "&", "\n")
_REDIRECT = re.compile(r"^(\d*)(&>>|&>|>>|>&|<&|>\||<<<|<<|<>|>|<)(.*)$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX_PROGRAMS = ("nohup", "exec", "time", "env")
_QUOTE_ERRORS = {"'": "a single quote is not closed", '"': "a double quote is not closed"}


@record
class ShellCommand:
    """One simple command: its words (program first) and the environment the line gives it."""

    words: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def argv(self) -> list[str]:
        """The words with the environment as leading ``VAR=value`` words (how engines read a command)."""
        return [f"{name}={value}" for name, value in self.env] + list(self.words)

    @property
    def text(self) -> str:
        return " ".join(self.words)


@record
class _Token:
    text: str
    kind: str  # "word", "op" (a separator) or "redirect"
    quoted: bool = False


def split_shell_text(text: str) -> list[ShellCommand]:
    """The simple commands of a shell line (``\\``-newline continuations joined)."""
    return _commands(_tokens(text.replace("\\\r\n", " ").replace("\\\n", " ")))


def split_shell_words(words: Sequence[str]) -> list[ShellCommand]:
    """The simple commands of a line already split into words by a shell."""
    return _commands([_word_token(w) for w in words])


def _word_token(word: str) -> _Token:
    if word in SEPARATORS:
        return _Token(word, "op")
    if _REDIRECT.match(word) and not word.startswith("-"):
        return _Token(word, "redirect")
    return _Token(word, "word", quoted=True)


class _Reader:
    """A character-level reader of shell words, quotes and operators."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0
        self.out: list[_Token] = []
        self.word: list[str] = []
        self.quoted = False

    def flush(self) -> None:
        if self.word or self.quoted:
            self.out.append(_Token("".join(self.word), "word", self.quoted))
        self.word, self.quoted = [], False

    def quote(self, mark: str) -> None:
        end = self.i + 1
        while True:
            if end >= len(self.text):
                raise ServekitError(f"cannot split the command as a shell would: {_QUOTE_ERRORS[mark]}",
                                    fix="check the quoting")
            if mark == '"' and self.text[end] == "\\" and end + 1 < len(self.text):
                end += 2
                continue
            if self.text[end] == mark:
                break
            end += 1
        body = self.text[self.i + 1:end]
        self.word.append(re.sub(r'\\([\\"$`])', r"\1", body) if mark == '"' else body)
        self.quoted, self.i = True, end + 1

    def operator(self) -> bool:
        """Read a separator or a redirection at the reader's place; False when none starts there."""
        rest = self.text[self.i:]
        for op in SEPARATORS:
            if rest.startswith(op):
                self.flush()
                self.out.append(_Token(op, "op"))
                self.i += len(op)
                return True
        match = re.match(r"(&>>|&>|>>|>&|<&|>\||<<<|<<|<>|>|<)(\d+|-)?", rest)
        if not match:
            return False
        fd = "".join(self.word) if self.word and "".join(self.word).isdigit() and not self.quoted else ""
        if fd:
            self.word = []
        else:
            self.flush()
        self.out.append(_Token(fd + match.group(0), "redirect"))
        self.i += len(match.group(0))
        return True


def _tokens(text: str) -> list[_Token]:
    reader = _Reader(text)
    while reader.i < len(text):
        char = text[reader.i]
        if char in "'\"":
            reader.quote(char)
        elif char == "\\" and reader.i + 1 < len(text):
            reader.word.append(text[reader.i + 1])
            reader.i += 2
        elif char == "#" and not reader.word and not reader.quoted:
            end = text.find("\n", reader.i)
            reader.i = len(text) if end < 0 else end
        elif char in " \t\r":
            reader.flush()
            reader.i += 1
        elif char in ";&|<>\n" and reader.operator():
            continue
        else:
            reader.word.append(char)
            reader.i += 1
    reader.flush()
    return reader.out


def _needs_target(token: _Token) -> bool:
    """A redirection whose target is the next word (``> log``), not part of itself (``2>&1``, ``>log``)."""
    match = _REDIRECT.match(token.text)
    return bool(match) and not match.group(3)


def _commands(tokens: list[_Token]) -> list[ShellCommand]:
    groups: list[list[str]] = [[]]
    skip = False
    for token in tokens:
        if skip:
            skip = False
            if token.kind == "word":
                continue
        if token.kind == "op":
            groups.append([])
        elif token.kind == "redirect":
            skip = _needs_target(token)
        else:
            groups[-1].append(token.text)
    exported: list[tuple[str, str]] = []
    out = []
    for words in groups:
        command = _simple_command(words, exported)
        if command is not None:
            out.append(command)
    return out


def _simple_command(words: list[str], exported: list[tuple[str, str]]) -> ShellCommand | None:
    """The command ``words`` run (None for an ``export`` or a bare assignment), taking its prefixes off."""
    env: list[tuple[str, str]] = []
    rest = list(words)
    while rest:
        if rest[0] in _PREFIX_PROGRAMS:
            rest.pop(0)
        elif _ASSIGNMENT.match(rest[0]):
            name, _, value = rest.pop(0).partition("=")
            env.append((name, value))
        else:
            break
    if rest[:1] == ["export"]:
        for word in rest[1:]:
            if _ASSIGNMENT.match(word):
                name, _, value = word.partition("=")
                exported.append((name, value))
        return None
    if not rest:
        return None
    merged = dict(exported)
    merged.update(env)
    return ShellCommand(tuple(rest), tuple(merged.items()))
