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
    """One ``dependencies`` entry: an extra install command, its note, and where it applies.

    ``brands`` (``brand``: one name or a list) limits it to hardware of those brands (compared
    without regard to case, as the catalog check reads them; empty: every brand);
    ``install_modes`` names the install forms it belongs to (``pip``, ``docker``; empty: pip
    only, as the recipes site reads an absent list); ``optional`` marks a step a person runs
    by choice."""

    command: Any
    note: Any
    optional: bool = False
    brands: tuple[str, ...] = ()
    install_modes: tuple[str, ...] = ()

    @classmethod
    def of(cls, raw: Any) -> Dependency:
        get = (raw if isinstance(raw, dict) else {}).get
        return cls(get("command"), get("note"), get("optional") is True,
                   tuple(b.lower() for b in _names(get("brand"))), _names(get("install_modes")))

    def applies_to(self, brand: str) -> bool:
        """The step is for hardware of ``brand``."""
        return not self.brands or brand.lower() in self.brands


def _names(raw: Any) -> tuple[str, ...]:
    """One name or a list of names (anything else names nothing)."""
    if isinstance(raw, str):
        return (raw,)
    return tuple(n for n in raw if isinstance(n, str)) if isinstance(raw, list) else ()
