"""What an upgrade does to each option a command gives: still parsed, written another way (renamed,
a newer negative form), moved into a key of a JSON-valued option, gone, or given a value (a choice,
a JSON key) the newer release refuses. Each answer is a finding and a change to the command's
words; the catalogs decide, the engine's upgrade table explains (and decides where no catalog of
the release is stored).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog, FlagSpec, version_key
from servekit.engines.common.upgrade_table import MOVED, REMOVED, RENAMED, OptionChange, UpgradeTable, crossed
from servekit.engines.common.upgrade_words import Item, json_object, lookup, typed_value
from servekit.engines.common.valuecheck import check_value
from servekit.records import record

FindOlder = Callable[[str], "tuple[FlagSpec, str] | None"]
"""An option name -> (its flag in the newest stored release at or below the target that knows it, that release)."""


@record
class Sides:
    """The two releases of one check: what was asked for and which catalogs stand for them."""

    engine: str
    old: str
    new: str
    new_catalog: FlagCatalog
    table: UpgradeTable
    old_catalog: FlagCatalog | None = None
    find_older: FindOlder | None = None
    first_refusing: Callable[[str], str | None] | None = None

    def release(self, version: str | None) -> str:
        return f"{self.engine} {version or self.new_catalog.version}"


@dataclass
class Outcome:
    """What the option analysis found and how the words change (``moved``: option -> keys)."""

    findings: list[tuple[Finding, str | None]] = field(default_factory=list)
    moved: dict[str, dict[str, Any]] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)
    given: dict[str, str] = field(default_factory=dict)  # destination -> the value the command gives

    def add(self, finding: Finding, source: str | None = None) -> None:
        self.findings.append((finding, source))
        if finding.option:
            self.covered.add(finding.option)


def _table_entry(sides: Sides, name: str) -> OptionChange | None:
    dashed = "--" + name[2:].replace("_", "-") if name.startswith("--") else name
    return sides.table.option(name) or sides.table.option(dashed)


def _refused_by_table(sides: Sides, change: OptionChange | None) -> bool:
    """The table says a release on the way refuses the option, and the catalog checked predates it."""
    return (change is not None and not change.still_parses and crossed(change.release, sides.old, sides.new)
            and version_key(sides.new_catalog.version) < version_key(change.release or "0"))


def analyse(items: list[Item], sides: Sides) -> Outcome:
    """Every option item: findings, and the items rewritten in place (dropped ones emptied)."""
    out = Outcome()
    for item in items:
        spec = lookup(sides.new_catalog, item.name) if item.name else None
        if spec is not None and item.values:
            out.given[spec.dest or spec.name] = item.values[-1]
    for item in items:
        if item.name is None:
            continue
        spec = lookup(sides.new_catalog, item.name)
        change = _table_entry(sides, item.name)
        if spec is not None and not _refused_by_table(sides, change):
            _still_parsed(item, spec, change, sides, out)
        else:
            _refused(item, change, sides, out)
    return out


def _still_parsed(item: Item, spec: FlagSpec, change: OptionChange | None, sides: Sides, out: Outcome) -> None:
    name = item.name or ""
    if spec.negation and name in spec.hidden_negations:
        out.add(Finding("warning", "renamed-option",
                        f"{name} still parses in {sides.release(None)} but is hidden from help; "
                        f"the release writes {spec.negation}", f"write {spec.negation}", name,
                        sides.release(None)), None)
        item.name = spec.negation
    elif spec.deprecated and change is not None:
        words = change.replacement(item.values[-1] if item.values else None)
        fix = f"write {' '.join(words)}" if words else None
        out.add(Finding("warning", "deprecated-option", f"{name} is deprecated in {sides.release(None)}"
                        + (f": {change.why}" if change.why else ""), fix, name, sides.release(change.release)),
                change.source)
    _values(item, spec, sides, out)


def _values(item: Item, spec: FlagSpec, sides: Sides, out: Outcome) -> None:
    """Choices and JSON keys the newer release refuses, in each value of a still-parsed option."""
    older = lookup(sides.old_catalog, item.name or "")
    for index, value in enumerate(item.values):
        entry = sides.table.choice(spec.name, value)
        problem = check_value(spec, value)
        if problem and "is not one of" in problem and (entry is not None or (older and not check_value(older, value))):
            new = entry.new if entry else None
            fix = f"write {spec.name} {new}" if new else f"use one of: {', '.join((spec.choices or ())[:12])}"
            why = f": {entry.why}" if entry and entry.why else ""
            then = "" if new else f"; the rewritten command leaves {item.name} out, so its default applies"
            out.add(Finding("error", "removed-choice", f"{item.name} {value}: {sides.release(None)} no longer "
                            f"accepts {value!r}{why}{then}", fix, item.name,
                            sides.release(entry.release if entry else None)), entry.source if entry else None)
            if not new:
                item.words, item.name = [], None
                return
            item.values[index] = new
            continue
        if spec.json_valued:
            _keys(item, index, spec, older, sides, out)


def _keys(item: Item, index: int, spec: FlagSpec, older: FlagSpec | None, sides: Sides, out: Outcome) -> None:
    obj = json_object(item.values[index])
    if obj is None:
        return
    changed = False
    for key in list(obj):
        entry = sides.table.key(spec.name, key)
        known_now = spec.json_fields is None or key in spec.json_fields
        was_known = older is not None and older.json_fields is not None and key in older.json_fields
        if entry is not None and (crossed(entry.release, sides.old, sides.new) or not known_now):
            new = entry.new
        elif not known_now and spec.json_extra_forbidden and was_known:
            new = None
        else:
            continue
        what = f"became {spec.name}'s key {new!r}" if new else "was removed"
        fix = f"write {new!r} for {key!r}" if new else f"drop {key!r}"
        out.add(Finding("error", "renamed-key" if new else "removed-key",
                        f"{item.name}: the key {key!r} {what} in {sides.release(entry.release if entry else None)}"
                        + (f" ({entry.why})" if entry and entry.why else ""), fix, item.name,
                        sides.release(entry.release if entry else None)), entry.source if entry else None)
        value = obj.pop(key)
        if new:
            obj[new] = value
        changed = True
    if changed:
        item.values[index] = json.dumps(obj)


def _refused(item: Item, change: OptionChange | None, sides: Sides, out: Outcome) -> None:
    name = item.name or ""
    value = item.values[-1] if item.values else None
    known_before = lookup(sides.old_catalog, name) is not None
    seen = sides.first_refusing(name) if sides.first_refusing and known_before else None
    release = _removal_release(seen, change.release if change else None, sides)
    gone = Gone(name, sides.release(None), f" (removed in {sides.release(release)})" if release else "",
                sides.release(release))
    if change is not None:
        _apply_table(item, change, value, gone, sides, out)
        return
    listed = sides.new_catalog.renamed.get(name, "")
    if "." in listed.lstrip("-"):  # the catalog says: a key of a JSON-valued option now
        into, _, key = listed.partition(".")
        if lookup(sides.new_catalog, into) is not None:
            moved = OptionChange(name, MOVED, None, f"the {sides.release(None)} flag catalog's renamed options",
                                 into=into, key=key)
            _apply_table(item, moved, value, gone, sides, out)
            return
    renamed = _catalog_rename(item, sides)
    if renamed is not None:
        new, source = renamed
        out.add(Finding("error", "renamed-option", f"{gone.lead}; it became {new}", f"write {new}", name,
                        gone.release), source)
        item.name = new
        return
    out.add(Finding("error", "removed-option", f"{gone.lead}; the rewritten command leaves it out",
                    f"remove {name}; check that {gone.checked}'s default is what you need", name, gone.release))
    item.words, item.name = [], None


def _removal_release(seen: str | None, listed: str | None, sides: Sides) -> str | None:
    """The release that removed an option: the first stored catalog without it (``seen``), made
    precise by the table's release when that lies on the way and not after it (only the last patch
    of a minor release may be stored)."""
    if listed and crossed(listed, sides.old, sides.new) and (seen is None or version_key(listed) <= version_key(seen)):
        return listed
    return seen or listed


@record
class Gone:
    """How to say that the newer release does not parse an option."""

    option: str
    checked: str  # the release checked (``vllm 0.32.0``)
    when: str  # " (removed in vllm 0.10.0)" when the release that removed it is known
    release: str  # the release a finding names

    @property
    def lead(self) -> str:
        return f"{self.option} is not an option of {self.checked}{self.when}"


def _apply_table(item: Item, change: OptionChange, value: str | None, gone: Gone, sides: Sides,
                 out: Outcome) -> None:
    name = item.name or ""
    why = f"; {change.why}" if change.why else ""
    if change.kind == MOVED and change.into:
        key = change.key or ""
        out.add(Finding("error", "moved-option", f"{gone.lead}; its value is the key {key!r} of {change.into} "
                        f"now{why}", f"write {change.into} '{{\"{key}\": ...}}'", name, gone.release), change.source)
        if value is not None:
            out.moved.setdefault(change.into, {})[key] = typed_value(value, change.json_value)
        item.words, item.name = [], None
        return
    words = change.replacement(value) if change.kind == RENAMED else None
    already = words[0] if words and _already_given(words[0], sides, out) else None
    if already:
        words = ()  # the command already sets what the old option stood for: that setting wins
    if words is not None:
        words = tuple(_filled(w, sides, out) for w in words)
        shown = " ".join(words) or "nothing"
        given = f" {value}" if value and change.values else ""
        say = (f"write {shown} for {name}{given}" if words else f"drop {name}{given}: the command sets {already}"
               if already else f"drop {name}{given}: the default does the same")
        out.add(Finding("error", "renamed-option", f"{gone.lead}; {say}{why}",
                        f"write {shown}" if words else f"remove {name}", name, gone.release), change.source)
        _replace(item, words)
        return
    noop = change.kind == REMOVED and change.noop
    tail = "; dropping it changes nothing" if noop else "; the rewritten command leaves it out"
    out.add(Finding("error", "removed-option", f"{gone.lead}{why}{tail}", f"remove {name}", name, gone.release),
            change.source)
    item.words, item.name = [], None


def _already_given(option: str, sides: Sides, out: Outcome) -> bool:
    spec = lookup(sides.new_catalog, option)
    return spec is not None and (spec.dest or spec.name) in out.given


def _filled(word: str, sides: Sides, out: Outcome) -> str:
    """A replacement word ``{--option}`` is the value the command gives that option (else its default)."""
    if not (word.startswith("{--") and word.endswith("}")):
        return word
    spec = lookup(sides.new_catalog, word[1:-1])
    if spec is None:
        return word
    given = out.given.get(spec.dest or spec.name)
    return given if given is not None else str(spec.default if spec.default is not None else 1)


def _replace(item: Item, words: tuple[str, ...]) -> None:
    """The item becomes ``words`` (an option and its values, or nothing)."""
    if not words:
        item.words, item.name = [], None
        return
    item.name, item.values, item.inline, item.words = words[0], list(words[1:]), False, list(words)


def _catalog_rename(item: Item, sides: Sides) -> tuple[str, str | None] | None:
    """The new spelling of a refused option from the catalogs: the newer catalog's own rename list,
    or the flag the option named in an older stored release, found again by its destination."""
    name = item.name or ""
    listed = sides.new_catalog.renamed.get(name)
    if listed and "." not in listed.lstrip("-") and lookup(sides.new_catalog, listed) is not None:
        return listed, f"the {sides.release(None)} flag catalog's renamed options"
    found = (lookup(sides.old_catalog, name), sides.old_catalog.version) if sides.old_catalog else (None, None)
    if found[0] is None and sides.find_older is not None:
        found = sides.find_older(name) or (None, None)
    spec, version = found
    if spec is None or not spec.dest:
        return None
    now = sides.new_catalog.by_dest(spec.dest)
    if now is None:
        return None
    new = now.negation if spec.is_negation(name) or name == spec.negation else now.name
    if not new or new == name:
        return None
    return new, f"the {sides.engine} {version} and {sides.new_catalog.version} flag catalogs ({spec.dest})"
