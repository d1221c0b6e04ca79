"""One list of MAX findings from the catalog's checks and MAX's own rules: an option an older
release had names its current spelling, and each problem is reported once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from servekit.engines.common.findings import ERROR, Finding, finding
from servekit.engines.max.renames import rename_for

_UNKNOWN = ("unknown-option", "renamed-option")


def combined(
    catalog: Sequence[Finding], rules: Sequence[Finding], version: str, *, parser_first: bool = False
) -> list[Finding]:
    """Catalog findings (renames named), then rule findings, each problem once.

    A bad value both the parser and a MAX rule refuse is one finding: the rule's (``parser_first``
    False), or the parser's carrying the rule's fix (``parser_first`` True, as ``max`` would say it).
    """
    ruled = {f.option: f for f in rules if f.is_error and f.option}
    both = {f.option for f in catalog if f.is_error and f.code == "bad-type" and f.option in ruled}
    if parser_first:
        kept = [_with_fix(f, ruled[f.option]) if f.option in both and f.code == "bad-type" else f for f in catalog]
        rules = [f for f in rules if not (f.is_error and f.option in both)]
    else:
        kept = [f for f in catalog if not (f.option in both and f.code == "bad-type")]
    return once_each([with_rename(f, version) for f in kept] + list(rules))


def _with_fix(parser: Finding, rule: Finding) -> Finding:
    return replace(parser, fix=rule.fix or parser.fix)


def with_rename(f: Finding, version: str) -> Finding:
    """An unknown option an older MAX had, as a finding that names what became of it."""
    if f.code not in _UNKNOWN or not f.option:
        return f
    rename = rename_for(f.option)
    if rename is None:
        return f
    old = f.option.split("=", 1)[0]
    when = f"in MAX {rename.release}" if rename.verified else f"{rename.release} (release not confirmed)"
    if rename.removed:
        message = f"{old} is not an option of MAX {version}: it was removed {when}"
        return finding(ERROR, "max.removed-option", message, option=old, fix=rename.fix())
    message = f"{old} is not an option of MAX {version}: it became {rename.new} {when}"
    return finding(ERROR, "max.renamed-option", message, option=old, fix=rename.fix())


def once_each(findings: Sequence[Finding]) -> list[Finding]:
    """Findings in order, each (code, option) once; findings about no option each message once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for f in findings:
        key = (f.code, f.option) if f.option else (f.code, "\0" + f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
