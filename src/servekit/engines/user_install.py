"""The install steps a plan shows for an engine, as the engine declares them (``Engine.user_install``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from servekit.engines.common.engine import Engine
from servekit.engines.registry import get_engine

if TYPE_CHECKING:
    from servekit.engines.common.user_install import UserInstall


def user_install(engine: str | Engine) -> UserInstall | None:
    """The engine's install steps for people, or None when it declares none."""
    chosen = get_engine(engine) if isinstance(engine, str) else engine
    return chosen.user_install
