"""Defaults that changed between two releases for what a command leaves unset: from the catalogs'
``default`` fields where both releases store the flag, and from the engine's upgrade table for
behaviour no flag shows (an engine generation chosen by an environment variable)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.engines.common.upgrade_table import DefaultChange, crossed

_NOTHING = (None, "", "none", "None", "==SUPPRESS==")  # argparse.SUPPRESS: no default is set


def _same(before: Any, after: Any) -> bool:
    if before in _NOTHING and after in _NOTHING:
        return True
    return json.dumps(before, sort_keys=True, default=str) == json.dumps(after, sort_keys=True, default=str)


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _keep_words(spec: FlagSpec, before: Any) -> str | None:
    """How to ask the newer release for the older default, when a flag can say it."""
    if before in _NOTHING:
        return None
    if not spec.takes_value:
        if before is True:
            return spec.name
        return spec.negation if before is False and spec.negation else None
    if isinstance(before, (dict, list)):
        return f"{spec.name} '{json.dumps(before)}'"
    return f"{spec.name} {before}"


def catalog_defaults(old: FlagCatalog, new: FlagCatalog, given: set[str], release: str) -> list[Finding]:
    """A note per flag the command does not set whose default differs between the two catalogs."""
    before = {spec.dest or spec.name: spec for spec in old.flags}
    out = []
    for spec in new.flags:
        dest = spec.dest or spec.name
        was = before.get(dest)
        if was is None or dest in given or spec.hidden or _same(was.default, spec.default):
            continue
        keep = _keep_words(spec, was.default)
        out.append(Finding("note", "changed-default",
                           f"{spec.name} defaults to {_shown(spec.default)} in {release} "
                           f"(it was {_shown(was.default)} in {old.engine} {old.version})",
                           f"to keep the old behaviour add {keep}" if keep else None, spec.name, release))
    return out


def _sets(names: Iterable[str], env: Mapping[str, str], options: set[str]) -> bool:
    """The command sets one of ``names``: an option (``--x``), a variable (``NAME``) or ``NAME=value``."""
    for name in names:
        if name.startswith("-"):
            if name in options:
                return True
            continue
        key, eq, value = name.partition("=")
        if key in env and (not eq or env[key] == value):
            return True
    return False


def table_defaults(changes: Iterable[DefaultChange], old: str, new: str, env: Mapping[str, str],
                   options: set[str], engine: str) -> list[tuple[Finding, str]]:
    """The table's behaviour changes on the way from ``old`` to ``new`` that touch this command."""
    out = []
    for change in changes:
        if not crossed(change.release, old, new) or _sets(change.unless, env, options):
            continue
        if change.when and not _sets(change.when, env, options):
            continue
        keep = " ".join(change.keep)
        fix = (f"to keep the old behaviour {'prefix the command with' if change.env_only else 'add'} {keep}"
               if keep else None)
        out.append((Finding(change.severity, "changed-default", change.what, fix, None,
                            f"{engine} {change.release}"), change.source))
    return out
