"""What an engine's upgrade changed that its flag catalogs cannot say by themselves: each entry a
change people meet when they move a command to a newer release, with the release and the public
page it is read from.

The catalogs say *that* an option or a choice is gone; this table says what took its place (a new
option, a key inside a JSON-valued option, a value) or that dropping it changes nothing, and it
carries the changes of default behaviour that no flag shows (an engine chosen by an environment
variable). An entry whose ``release`` is None only explains a change the stored catalogs show; one
with a release is also applied where no catalog of that release is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from servekit.engines.common.flags import version_key
from servekit.records import record

REMOVED = "removed"  # gone, nothing replaces it (``noop``: dropping it changes nothing)
RENAMED = "renamed"  # written as ``words`` now (``{value}`` stands for the value it had)
MOVED = "moved"  # its value is a key (``key``) inside the JSON-valued option ``into`` now


@record
class OptionChange:
    """One option of an older release and what became of it."""

    option: str
    kind: str  # REMOVED | RENAMED | MOVED
    release: str | None
    source: str
    why: str = ""
    words: tuple[str, ...] = ()  # RENAMED: the words that replace it ("{value}": its value)
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # RENAMED: per value, its words
    into: str | None = None  # MOVED: the JSON-valued option that holds it now
    key: str | None = None  # MOVED: the key inside that option
    json_value: bool = False  # MOVED: the value is JSON itself (an object), not a string or number
    noop: bool = False  # REMOVED: the behaviour it chose is what the newer release does anyway
    still_parses: bool = False  # the old spelling is still accepted (deprecated) at ``release``

    def replacement(self, value: str | None) -> tuple[str, ...] | None:
        """The words that replace the option given with ``value``; None when the table has no
        rule for that value."""
        if self.kind != RENAMED:
            return None
        if self.values:
            found = self.values.get(value or "")
            return tuple(found) if found is not None else None
        return tuple(w.replace("{value}", value or "") for w in self.words)


@record
class ChoiceChange:
    """A value of an option that a release refuses (``new``: what to write instead, if anything)."""

    option: str
    value: str
    release: str | None
    source: str
    new: str | None = None
    why: str = ""


@record
class KeyChange:
    """A key inside a JSON-valued option that a release renamed (``new``) or dropped (None)."""

    option: str
    key: str
    release: str | None
    source: str
    new: str | None = None
    why: str = ""


@record
class DefaultChange:
    """A change of behaviour that no option of the command shows: what a launch that sets nothing
    gets from ``release`` on. ``setting`` is the option or environment variable that keeps the old
    behaviour (``keep``: its words or ``NAME=value``), ``unless``: options or variables that, when
    the command sets them, mean the change does not touch it; ``when``: the change touches only
    commands that set one of these."""

    id: str
    release: str
    what: str
    source: str
    keep: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    when: tuple[str, ...] = ()  # only commands that set one of these (``NAME=value``, ``NAME``, an option)
    env_only: bool = False  # ``keep`` is an environment assignment
    severity: str = "warning"


@record
class UpgradeTable:
    """One engine's table (empty for an engine with no known changes)."""

    options: tuple[OptionChange, ...] = ()
    choices: tuple[ChoiceChange, ...] = ()
    keys: tuple[KeyChange, ...] = ()
    defaults: tuple[DefaultChange, ...] = ()

    def option(self, name: str) -> OptionChange | None:
        return next((c for c in self.options if c.option == name), None)

    def choice(self, option: str, value: str) -> ChoiceChange | None:
        return next((c for c in self.choices if c.option == option and c.value == value), None)

    def key(self, option: str, key: str) -> KeyChange | None:
        return next((c for c in self.keys if c.option == option and c.key == key), None)


def crossed(release: str | None, old: str, new: str) -> bool:
    """The change made in ``release`` lies on the way from ``old`` to ``new`` (old < release <= new)."""
    if release is None:
        return False
    at = version_key(release)
    return version_key(old) < at <= version_key(new)
