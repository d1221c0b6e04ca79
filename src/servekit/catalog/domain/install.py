"""How a recipe adjusts install steps: ``model.install.<pip|docker>`` and ``dependencies``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class InstallTab:
    """``model.install.<tab>``: ``false`` drops the tab (``dropped``); a map overrides its
    ``command`` and ``note``; anything else keeps the defaults."""

    dropped: bool
    command: Any
    note: Any

    @classmethod
    def of(cls, raw: Any) -> InstallTab:
        get = (raw if isinstance(raw, dict) else {}).get
        return cls(raw is False, get("command"), get("note"))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Dependency:
    """One ``dependencies`` entry: an extra install command and its note."""

    command: Any
    note: Any

    @classmethod
    def of(cls, raw: Any) -> Dependency:
        get = (raw if isinstance(raw, dict) else {}).get
        return cls(get("command"), get("note"))
