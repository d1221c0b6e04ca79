"""An option list as the words a person wrote, grouped per option, so an upgrade can rewrite it
word for word: rename an option, drop it with its values, change one value, or move a value
into a key of a JSON-valued option.

Grouping follows the older release's catalog where it knows the option (how many values it
takes), else the newer one's; an option neither knows takes the next word as its value unless
that word is an option or the name reads as a switch (``--enable-...``, ``--disable-...``,
``--use-...``, ``--no-...``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from servekit.engines.common.flags import FlagCatalog, FlagSpec

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_SWITCH_NAMES = re.compile(r"^--(enable|disable|use|no)-")


@dataclass
class Item:
    """One option with its values (``name`` None: a positional word)."""

    words: list[str]
    name: str | None = None
    values: list[str] = field(default_factory=list)
    inline: bool = False  # written --name=value
    spec: FlagSpec | None = None  # the older (or else the newer) release's flag

    def render(self) -> list[str]:
        if self.name is None:
            return list(self.words)
        if self.inline and len(self.values) == 1:
            return [f"{self.name}={self.values[0]}"]
        return [self.name, *self.values]


def is_option(word: str) -> bool:
    return word.startswith("-") and word != "-" and word != "--" and not _NEGATIVE_NUMBER.match(word)


def lookup(catalog: FlagCatalog | None, name: str) -> FlagSpec | None:
    """The flag ``name`` spells in ``catalog``, also with underscores written for dashes, or as the
    unique prefix of one long option where the parser takes abbreviations."""
    if catalog is None:
        return None
    found = catalog.get(name) or catalog.get("--" + name[2:].replace("_", "-") if name.startswith("--") else name)
    if found is None and catalog.allow_abbrev and name.startswith("--") and len(name) > 2:
        specs = {id(catalog.get(o)): catalog.get(o) for o in catalog.names() if o.startswith(name)}
        found = next(iter(specs.values())) if len(specs) == 1 else None  # argparse takes a unique prefix
    return found


def _arity(spec: FlagSpec | None, name: str, rest: Sequence[str]) -> int:
    """How many of the following words the option takes."""
    if spec is None:
        return 1 if rest and not is_option(rest[0]) and not _SWITCH_NAMES.match(name) else 0
    if not spec.takes_value or spec.nargs == 0:
        return 0
    if spec.nargs in (None, 1):
        return 1 if rest else 0
    if spec.nargs == "?":
        return 1 if rest and not is_option(rest[0]) else 0
    if isinstance(spec.nargs, int):
        return min(spec.nargs, len(rest))
    count = 0
    while count < len(rest) and not is_option(rest[count]):
        count += 1
    return count


def group(args: Sequence[str], older: FlagCatalog | None, newer: FlagCatalog) -> list[Item]:
    """The option list as items, in order."""
    items: list[Item] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            items += [Item([w]) for w in args[i:]]
            break
        if not is_option(word):
            items.append(Item([word]))
            i += 1
            continue
        name, eq, value = word.partition("=")
        spec = lookup(older, name) or lookup(newer, name)
        if eq:
            items.append(Item([word], name, [value], True, spec))
            i += 1
            continue
        count = _arity(spec, name, args[i + 1:])
        items.append(Item(list(args[i:i + 1 + count]), name, list(args[i + 1:i + 1 + count]), False, spec))
        i += 1 + count
    return items


def json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def typed_value(text: str, as_json: bool) -> Any:
    """A command-line value as the JSON value a config key takes (numbers stay numbers)."""
    if as_json:
        try:
            return json.loads(text)
        except ValueError:
            return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    lowered = text.lower()
    return {"true": True, "false": False}.get(lowered, text)


def merge_into(items: list[Item], option: str, newer: FlagCatalog, moved: dict[str, Any]) -> None:
    """Put ``moved`` keys into the JSON value of ``option`` (the last one given), or add the option."""
    target = lookup(newer, option)
    for item in reversed(items):
        if item.name is None or item.values == []:
            continue
        spec = lookup(newer, item.name)
        if spec is not None and target is not None and spec.dest == target.dest:
            current = json_object(item.values[-1])
            if current is not None:
                item.values[-1] = json.dumps({**current, **moved})
                return
    items.append(Item([], option, [json.dumps(moved)]))
