"""Which engine a plan is for, asked of the engine registry."""

from __future__ import annotations

from servekit.engines.registry import engine_names, get_engine, native_engine


def checked_engine(name: str) -> str:
    """The id of the engine ``name`` (an id or an alias) names; an unknown name is the
    registry's error, which lists the known ones."""
    return get_engine(name).id


def translates(name: str) -> bool:
    """Whether plans for ``name`` are translated from the form they are synthesized in (the
    native engine's)."""
    return get_engine(name) is not native_engine()


def engine_help(prefix: str = "") -> str:
    """CLI help text that lists the registered engines."""
    return f"{prefix}{', '.join(engine_names())}"

