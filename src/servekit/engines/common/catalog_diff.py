"""What changed in an engine command's options between two stored catalog versions.

Flags are matched by destination (argparse ``dest`` / click name), or, where the destination
changed, by an option string both releases accept; a name the other release still parses is
neither added nor removed. A flag whose visible name or
negative form changed is *renamed*; when the old spelling still parses in the newer release
(an alias or a hidden negation) it says so. Choices and defaults are compared where both
versions have the flag.
"""

from __future__ import annotations

from typing import Any

from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.records import record

NAME = "name"
NEGATION = "negation"


@record
class Rename:
    """``old`` is written ``new`` in the newer release; ``still_parses``: the old spelling works, hidden."""

    old: str
    new: str
    kind: str  # NAME | NEGATION
    still_parses: bool

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "kind": self.kind, "still_parses": self.still_parses}


@record
class ValueChange:
    """A flag's choices or default before and after (choices ``None``: any value)."""

    flag: str
    before: Any
    after: Any

    def to_dict(self) -> dict[str, Any]:
        out = {"flag": self.flag, "before": self.before, "after": self.after}
        if isinstance(self.before, list) and isinstance(self.after, list):
            out["added"] = [c for c in self.after if c not in self.before]
            out["removed"] = [c for c in self.before if c not in self.after]
        return out


@record
class CatalogDiff:
    engine: str
    command: str
    old_version: str
    new_version: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    renamed: tuple[Rename, ...]
    choices: tuple[ValueChange, ...]
    defaults: tuple[ValueChange, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "command": self.command,
            "from": self.old_version,
            "to": self.new_version,
            "added": list(self.added),
            "removed": list(self.removed),
            "renamed": [r.to_dict() for r in self.renamed],
            "choices": [c.to_dict() for c in self.choices],
            "defaults": [d.to_dict() for d in self.defaults],
        }

    def rename_of(self, option: str) -> Rename | None:
        return next((r for r in self.renamed if r.old == option), None)


def _by_dest(catalog: FlagCatalog) -> dict[str, FlagSpec]:
    return {spec.dest or spec.name: spec for spec in catalog.flags}


def _renames(old: FlagSpec, new: FlagSpec) -> list[Rename]:
    out = []
    if old.name != new.name:
        out.append(Rename(old.name, new.name, NAME, old.name in new.option_strings()))
    if old.negation and new.negation and old.negation != new.negation:
        out.append(Rename(old.negation, new.negation, NEGATION, new.is_negation(old.negation)))
    elif old.negation and not new.negation and not new.is_negation(old.negation):
        out.append(Rename(old.negation, "", NEGATION, False))
    return out


def _choices(spec: FlagSpec) -> list[str] | None:
    return list(spec.choices) if spec.choices is not None else None


def _positive(spec: FlagSpec) -> tuple[str, ...]:
    """The spellings that turn a flag on or give it a value (not its negative forms)."""
    return (spec.name, *spec.aliases)


def _same_option(before: dict[str, FlagSpec], after: dict[str, FlagSpec]) -> dict[str, str]:
    """Flags whose destination changed but that share a positive spelling (SGLang 0.5.14 moved
    ``--data-parallel-size`` to dest ``dp_size``, named ``--dp-size`` with the old name as alias):
    old dest -> new dest, for the flags the destinations alone leave unmatched."""
    unmatched = {opt: dest for dest in after.keys() - before.keys() for opt in _positive(after[dest])}
    pairs: dict[str, str] = {}
    for dest in sorted(before.keys() - after.keys()):
        match = next((unmatched[o] for o in _positive(before[dest]) if o in unmatched), None)
        if match is not None and match not in pairs.values():
            pairs[dest] = match
    return pairs


def diff_catalogs(old: FlagCatalog, new: FlagCatalog) -> CatalogDiff:
    """Every change from ``old`` to ``new`` (two versions of one engine command)."""
    before, after = _by_dest(old), _by_dest(new)
    for was, now in _same_option(before, after).items():  # one key for a flag whose dest changed
        before[now] = before.pop(was)
    renamed: list[Rename] = []
    choices: list[ValueChange] = []
    defaults: list[ValueChange] = []
    for dest in sorted(before.keys() & after.keys(), key=lambda d: after[d].name):
        was, now = before[dest], after[dest]
        renamed += _renames(was, now)
        if _choices(was) != _choices(now):
            choices.append(ValueChange(now.name, _choices(was), _choices(now)))
        if was.default != now.default:
            defaults.append(ValueChange(now.name, was.default, now.default))
    return CatalogDiff(
        engine=new.engine,
        command=new.command,
        old_version=old.version,
        new_version=new.version,
        added=tuple(sorted(after[d].name for d in after.keys() - before.keys() if old.get(after[d].name) is None)),
        removed=tuple(sorted(before[d].name for d in before.keys() - after.keys() if new.get(before[d].name) is None)),
        renamed=tuple(renamed),
        choices=tuple(choices),
        defaults=tuple(defaults),
    )


def _shown(value: Any, limit: int = 60) -> str:
    text = "any value" if value is None else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _choice_change(change: ValueChange) -> str:
    if isinstance(change.before, list) and isinstance(change.after, list):
        parts = change.to_dict()
        return ", ".join([*(f"+{c}" for c in parts["added"]), *(f"-{c}" for c in parts["removed"])])
    return f"{_shown(change.before)} -> {_shown(change.after)}"


def render_diff(diff: CatalogDiff) -> list[str]:
    """Text lines: a heading, then one line per change, grouped."""
    lines = [f"{diff.engine} {diff.command}: {diff.old_version} -> {diff.new_version}"]
    lines += [f"added: {name}" for name in diff.added]
    lines += [f"removed: {name}" for name in diff.removed]
    for r in diff.renamed:
        new = r.new or "(no negative form)"
        still = " (the old spelling still parses, hidden from help)" if r.still_parses else ""
        lines.append(f"renamed {r.kind}: {r.old} -> {new}{still}")
    lines += [f"choices: {c.flag}: {_choice_change(c)}" for c in diff.choices]
    lines += [f"default: {d.flag}: {d.before!r} -> {d.after!r}" for d in diff.defaults]
    counts = (f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.renamed)} renamed, "
              f"{len(diff.choices)} choice changes, {len(diff.defaults)} default changes")
    return [*lines, counts]
