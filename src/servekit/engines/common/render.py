"""Engine command lines laid out for a terminal."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from servekit.engines.common.command_line import looks_like_option


def render_multiline(argv: Sequence[str], indent: str = "  ", quote: Callable[[str], str] = shlex.quote) -> str:
    """``prog sub POSITIONAL \\`` then one option (with its value) per line, shell-quoted
    (``quote``: a placeholder-aware quoting keeps ``$HEAD_IP`` expandable where a script fills it in).

    The program words and leading positionals stay on the first line; the result is one shell
    command, so ``shlex.split`` of it (with line continuations removed) gives ``argv`` back.
    """
    head: list[str] = []
    rest = list(argv)
    while rest and not rest[0].startswith("-"):
        head.append(quote(rest.pop(0)))
    lines = [" ".join(head)] if head else []
    i = 0
    while i < len(rest):
        line = [quote(rest[i])]
        i += 1
        while i < len(rest) and not looks_like_option(rest[i]):
            line.append(quote(rest[i]))
            i += 1
        lines.append(indent + " ".join(line))
    return " \\\n".join(lines)
