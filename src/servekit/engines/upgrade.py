"""``servekit lint --from A --to B``: will this exact command still start on release B, and how must
it change?

The command is read with release A's catalog (how many values each option takes, what it meant)
and checked against B's: options B no longer parses (removed, renamed, moved into a key of a
JSON-valued option), choices and JSON keys B refuses, options B still parses in a spelling it
hides, and defaults that changed for what the command leaves unset. Releases resolve to the newest
stored catalog at or below them (said so in a note). ``ok`` is B's verdict on the command as
written: B's own lint (its parser and startup checks) plus the table's refusals for a release
newer than the catalog that stands for it. ``rewritten`` is the command that B accepts: renames
applied, removed options dropped, moved values put into their JSON option.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from servekit.engines.common.command_line import strip_env
from servekit.engines.common.engine import Engine
from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import CatalogStore, FlagSpec, version_key
from servekit.engines.common.upgrade_defaults import catalog_defaults, table_defaults
from servekit.engines.common.upgrade_options import Outcome, Sides, analyse
from servekit.engines.common.upgrade_words import Item, group, lookup, merge_into
from servekit.errors import ServekitError
from servekit.records import record


@record
class Sourced:
    """A finding and the public page (or catalog) it rests on."""

    finding: Finding
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        out: dict[str, Any] = {"code": f.code, "severity": f.severity.value, "message": f.message, "fix": f.fix,
                               "release": f.release}
        if f.option:
            out["option"] = f.option
        if self.source:
            out["source"] = self.source
        return out


@record
class UpgradeReport:
    engine: str
    old: str
    new: str
    checked_old: str | None
    checked_new: str
    findings: tuple[Sourced, ...]
    rewritten: str | None

    @property
    def ok(self) -> bool:
        return not any(s.finding.is_error for s in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "from": self.old, "to": self.new, "engine": self.engine,
                "checked": {"from": self.checked_old, "to": self.checked_new},
                "findings": [s.to_dict() for s in self.findings], "rewritten": self.rewritten}


def resolve_release(store: CatalogStore, engine: str, wanted: str, command: str) -> tuple[str | None, Finding | None]:
    """The stored catalog standing for ``wanted`` (the newest at or below it) and a note when it is
    another release; (None, note) when every stored one is newer."""
    found = store.nearest(wanted, command)
    if found is None:
        stored = ", ".join(store.versions(command)) or "none"
        return None, Finding("note", "release-resolved", f"no {engine} catalog at or below {wanted} is stored "
                             f"(stored: {stored})", None, None, f"{engine} {wanted}")
    if version_key(found) == version_key(wanted.removeprefix("v")):
        return found, None
    return found, Finding("note", "release-resolved", f"{engine} {wanted} is checked with the stored catalog of "
                          f"{found}, the newest stored release at or below it", None, None, f"{engine} {found}")


def _program_split(engine: Engine, argv: Sequence[str]) -> tuple[list[str], list[str], list[str], str] | None:
    """(env words, program words, option words, sub-command) of a command that can be rewritten."""
    command = engine.split_command(argv)
    env_words = [f"{k}={v}" for k, v in command.env]
    _, rest = strip_env(argv)
    program = list(command.program)
    if command.form == "docker" or rest[:len(program)] != program:
        return None
    prefix = ["env"] if list(argv[:1]) == ["env"] else []
    return prefix + env_words, program, rest[len(program):], command.command


@lru_cache(maxsize=256)
def _first_refusing(store: CatalogStore, option: str, old: str | None, new: str, command: str) -> str | None:
    """The first stored release after ``old`` up to ``new`` whose catalog does not parse ``option``."""
    for version in store.versions(command):
        if (old is None or version_key(version) > version_key(old)) and version_key(version) <= version_key(new):
            if lookup(store.load(version, command), option) is None:
                return version
    return None


def _older_finder(store: CatalogStore, new: str, command: str):
    def find(option: str) -> tuple[FlagSpec, str] | None:
        for version in reversed(store.versions(command)):
            if version_key(version) > version_key(new):
                continue
            spec = lookup(store.load(version, command), option)
            if spec is not None:
                return spec, version
        return None

    return find


def check_upgrade(engine: Engine, old: str, new: str, argv: Sequence[str]) -> UpgradeReport:
    """Check ``argv`` (a command written for ``engine`` ``old``) against release ``new``."""
    store = engine.catalogs
    if store is None:
        raise ServekitError(f"{engine.id} stores no flag catalogs per release, so an upgrade cannot be checked",
                            fix="check the command against one release: servekit lint --version V -- ...")
    if version_key(old)[0] and version_key(new)[0] and version_key(old) >= version_key(new):
        raise ServekitError(f"--from {old} is not older than --to {new}", fix="name the release you run with --from "
                            "and the one you move to with --to")
    split = _program_split(engine, argv)
    command = split[3] if split else engine.split_command(argv).command
    new_version, new_note = resolve_release(store, engine.id, new, command)
    if new_version is None:
        raise ServekitError(new_note.message if new_note else f"no {engine.id} {new} catalog",
                            fix=f"extract one with {store.extractor}, or name a stored release with --to")
    old_version, old_note = resolve_release(store, engine.id, old, command)
    new_catalog = engine.flag_catalog(new_version, command)
    old_catalog = engine.flag_catalog(old_version, command) if old_version else None
    sides = Sides(engine.id, old, new, new_catalog, engine.upgrades, old_catalog,
                  _older_finder(store, new_version, command),
                  lambda option: _first_refusing(store, option, old_version, new_version, command))
    notes = [Sourced(n) for n in (old_note, new_note) if n is not None]
    if old_catalog is None:
        notes.append(Sourced(Finding("note", "no-old-catalog", f"no catalog of {engine.id} {old} or older is stored: "
                                     f"what changed is read from {engine.id} {new_version}'s catalog, the older "
                                     "stored ones and servekit's table of known changes", None, None, None)))
    args = split[2] if split else list(engine.split_command(argv).args)
    items = group(args, old_catalog, new_catalog)
    outcome = analyse(items, sides)
    for option, keys in outcome.moved.items():
        merge_into(items, option, new_catalog, keys)
    findings = notes + [Sourced(f, s) for f, s in outcome.findings]
    findings += _default_findings(engine, sides, items, argv)
    findings += _lint_findings(engine, argv, old_version, new_version, outcome)
    rewritten = None
    if split is not None:
        words = split[0] + split[1] + [w for item in items for w in (item.render() if item.name else item.words)]
        rewritten = shlex.join(words)
        findings += _leftover(engine, words, new_version)
    return UpgradeReport(engine.id, old, new, old_version, new_version, tuple(findings), rewritten)


def _given(items: list[Item], sides: Sides) -> set[str]:
    dests = set()
    for item in items:
        for catalog in (sides.old_catalog, sides.new_catalog):
            spec = lookup(catalog, item.name) if item.name else None
            if spec is not None:
                dests.add(spec.dest or spec.name)
    return dests


def _default_findings(engine: Engine, sides: Sides, items: list[Item], argv: Sequence[str]) -> list[Sourced]:
    out: list[Sourced] = []
    if sides.old_catalog is not None:
        out += [Sourced(f, f"the {engine.id} {sides.old_catalog.version} and {sides.new_catalog.version} flag catalogs")
                for f in catalog_defaults(sides.old_catalog, sides.new_catalog, _given(items, sides),
                                          sides.release(None))]
    env = dict(engine.split_command(argv).env)
    options = {item.name for item in items if item.name}
    out += [Sourced(f, s) for f, s in table_defaults(engine.upgrades.defaults, sides.old, sides.new, env,
                                                      options, engine.id)]
    return out


def _lint_findings(engine: Engine, argv: Sequence[str], old: str | None, new: str, outcome: Outcome) -> list[Sourced]:
    """The newer release's own lint of the command as written, less what the upgrade already said;
    an error the older release's lint did not have is an upgrade change and says so."""
    result = engine.lint(list(argv), new)
    before = {(f.code, f.option) for f in engine.lint(list(argv), old).errors} if old else None
    out = []
    for f in result.findings:
        if (f.option and f.option.split("=", 1)[0] in outcome.covered) or f.code == "renamed-option":
            continue
        if f.is_error and before is not None and (f.code, f.option) not in before:
            f = replace(f, message=f"{f.message} ({engine.id} {old} accepted it)")
        out.append(Sourced(f))
    return out


def _leftover(engine: Engine, words: list[str], version: str) -> list[Sourced]:
    """A note when the rewritten command still has errors the upgrade does not explain."""
    result = engine.lint(words, version)
    if result.valid:
        return []
    codes = ", ".join(sorted({f.code for f in result.errors}))
    return [Sourced(Finding("note", "rewritten-still-invalid",
                            f"the rewritten command still has errors on {engine.id} {version} ({codes}) that servekit "
                            "cannot rewrite", "see the error findings above", None, f"{engine.id} {version}"))]
