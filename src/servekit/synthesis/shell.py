"""Shell rendering: quoting that survives copy-paste and round-trips through ``shlex.split``."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

_SAFE = re.compile(r"[A-Za-z0-9_./=:@,+%-]+")
_BARE_VAR = re.compile(r"\$[A-Z_][A-Z0-9_]*[A-Za-z0-9_./:@,+%=-]*")
"""A placeholder, alone or with plain text after it (``$HEAD_IP``, ``$HEAD_IP:6379``)."""
_SAFE_WORD = re.compile(r"[A-Za-z0-9_./=:@,+%$~-]+")


def text(value: Any) -> str:
    """A catalog scalar as the text it becomes on a command line (JSON spelling)."""
    if type(value) is str:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def quote(value: Any) -> str:
    """Leave plain words and ``$VAR`` placeholders (with plain text after them) alone, so the shell
    fills them in; single-quote everything else."""
    return _quote_text(text(value))


@lru_cache(maxsize=65536)
def _quote_text(token: str) -> str:
    if token == "" or _BARE_VAR.fullmatch(token) or _SAFE.fullmatch(token):
        return token
    return "'" + token.replace("'", "'\\''") + "'"


def quote_word(value: Any) -> str:
    """Quote for ``-e K=V`` / ``-v a:b`` words: shell variables inside stay expandable."""
    token = text(value)
    if _SAFE_WORD.fullmatch(token):
        return token
    return quote(token)


def _is_flag(token: Any) -> bool:
    return type(token) is str and token[:1] == "-"


def arg_lines(tokens: list[Any]) -> list[str]:
    """One line per flag, its value beside it, as the recipe guides write commands."""
    lines: list[str] = []
    i, count = 0, len(tokens)
    while i < count:
        cur = tokens[i]
        nxt = tokens[i + 1] if i + 1 < count else None
        if _is_flag(cur) and nxt is not None and not _is_flag(nxt):
            lines.append(quote(cur) + " " + quote(nxt))
            i += 2
        else:
            lines.append(quote(cur))
            i += 1
    return lines


def command(program: str, tokens: list[Any], lines: list[str] | None = None) -> str:
    """``program`` followed by continuation lines, one flag (and value) per line."""
    lines = arg_lines(tokens) if lines is None else lines
    return program if not lines else program + " \\\n  " + " \\\n  ".join(lines)


def serve_command(model: str, tokens: list[Any], lines: list[str] | None = None) -> str:
    return command(f"vllm serve {quote(model)}", tokens, lines)


def join_continuations(script: str) -> str:
    """The command as bash reads it: backslash-newline outside quotes removed, full-line
    ``#`` comments (outside quotes) dropped. ``shlex.split`` of the result is the argv."""
    out: list[str] = []
    in_single = in_double = False
    at_line_start = True
    i = 0
    while i < len(script):
        ch = script[i]
        if at_line_start and not (in_single or in_double) and ch == "#":
            end = script.find("\n", i)
            i = len(script) if end < 0 else end + 1
            continue
        at_line_start = ch == "\n"
        if ch == "\\" and not in_single and i + 1 < len(script):
            if script[i + 1] == "\n":
                i += 2
                continue
            out.append(script[i:i + 2])
            i += 2
            continue
        if ch == "'" and not in_double:
            in_single = not in_single
        elif ch == '"' and not in_single:
            in_double = not in_double
        out.append(ch)
        i += 1
    return "".join(out)


_EXPANDABLE_WORD = re.compile(r"[A-Za-z0-9_./=:@,+%~${}-]+")
_WORD_END = " \t\n;|&)<>"
_WORD_START = " \t\n;|&()<>"


def _double_quoted(word: str) -> str:
    """``$X`` -> ``"$X"``, ``NAME=$X`` -> ``NAME="$X"``; a word without ``$`` or one that starts
    with ``~`` (tilde expansion happens only outside quotes) stays as it is."""
    if "$" not in word or word.startswith("~"):
        return word
    name, eq, rest = word.partition("=")
    if eq and "$" not in name:
        return f'{name}="{rest}"'
    return f'"{word}"'


def quote_expansions(script: str) -> str:
    """Shell text with every unquoted word that expands a variable double-quoted, so the value
    is one word whatever it holds (what shellcheck's SC2086 asks). ``shlex.split`` reads the
    result as it read the text: quoting changes how the shell splits, not the argv. Quoted
    text, escapes and full-line comments are left alone."""
    out: list[str] = []
    i, n = 0, len(script)
    quote = ""
    while i < n:
        ch = script[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < n:
                out.append(script[i:i + 2])
                i += 2
                continue
            quote = "" if ch == quote else quote
            out.append(ch)
            i += 1
            continue
        if ch == "#" and (i == 0 or script[i - 1] in " \t\n"):
            end = script.find("\n", i)
            end = n if end < 0 else end
            out.append(script[i:end])
            i = end
            continue
        if ch == "\\":
            out.append(script[i:i + 2])
            i += 2
            continue
        if ch in "'\"":
            quote = ch
            out.append(ch)
            i += 1
            continue
        match = _EXPANDABLE_WORD.match(script, i)
        if match is None:
            out.append(ch)
            i += 1
            continue
        word, end = match.group(), match.end()
        whole = (i == 0 or script[i - 1] in _WORD_START) and (end == n or script[end] in _WORD_END)
        out.append(_double_quoted(word) if whole else word)
        i = end
    return "".join(out)


def split_command(script: str) -> list[str]:
    """argv of a rendered command (what ``bash`` would run, without expanding ``$VARS``)."""
    import shlex

    return shlex.split(join_continuations(script))
