"""``servekit lint``: check an engine command line, by engine name, against its pinned flag catalog.

``lint_argv(engine, version, argv)`` needs no engine installed; the engine's own rules (its
``lint``) run after the catalog checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from servekit.engines.common.findings import Finding, LintResult
from servekit.engines.common.lint import check_args
from servekit.engines.registry import get_engine, native_engine
from servekit.engines.shell_lint import lint_shell_text
from servekit.errors import ServekitError
from servekit.jsonl import numbered_objects

__all__ = ["Finding", "LintResult", "check_args", "lint_argv", "lint_batch", "lint_shell"]


def lint_argv(engine: str, version: str | None, argv: Sequence[str]) -> LintResult:
    """Check ``argv`` (with or without its program prefix) for ``engine`` at ``version``."""
    return get_engine(engine).lint(list(argv), version)


def lint_shell(engine: str, version: str | None, command: str) -> LintResult:
    """Like :func:`lint_argv` for a shell line (``\\`` line continuations allowed): every engine command
    in it is checked, redirections, ``nohup``, ``export`` and other commands set aside."""
    return lint_shell_text(command, engine, version, lambda _argv: engine)


def lint_batch(lines: Iterable[str | bytes], version: str | None = None) -> list[dict[str, Any]]:
    """One result object per JSONL line {"engine": E, "command": SHELL_LINE} (or "argv": [...]), in order."""
    out: list[dict[str, Any]] = []
    for number, obj, error in numbered_objects(lines):
        if obj is None:
            out.append({"valid": False, "error": error, "findings": []})
            continue
        try:
            engine, chosen = str(obj.get("engine", native_engine().id)), obj.get("version", version)
            if isinstance(obj.get("argv"), list) and all(isinstance(w, str) for w in obj["argv"]):
                result = lint_argv(engine, chosen, obj["argv"])
            elif isinstance(obj.get("command"), str):
                result = lint_shell(engine, chosen, obj["command"])
            else:
                raise ServekitError('each line needs {"engine": ..., "command": "..."} (or "argv": [...])')
            out.append(result.to_dict())
        except (ValueError, ServekitError) as exc:
            out.append({"valid": False, "error": f"line {number}: {exc}", "findings": []})
    return out
