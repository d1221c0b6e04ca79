"""Which engine a plan is for, asked of the engine registry."""

from __future__ import annotations

from servekit.engines.registry import engine_for_platform, engine_names, get_engine, native_engine


def checked_engine(name: str) -> str:
    """The id of the engine ``name`` (an id or an alias) names; an unknown name is the
    registry's error, which lists the known ones."""
    return get_engine(name).id


def engine_on(name: str, platform: str | None) -> str:
    """The engine a plan for ``name`` runs as on a hardware ``platform``: a plain vLLM plan on a
    platform whose vLLM is a plugin or fork (Ascend: vllm-ascend; Cloud AI 100: vllm-qaic, as
    the engines declare in ``Engine.vllm_platforms``) runs as that engine; any other as named."""
    chosen = get_engine(name)
    if chosen is native_engine() and platform:
        return engine_for_platform(platform).id
    return chosen.id


def translates(name: str) -> bool:
    """Whether plans for ``name`` are translated from the form they are synthesized in (the
    native engine's)."""
    return get_engine(name) is not native_engine()


def engine_help(prefix: str = "") -> str:
    """CLI help text that lists the registered engines."""
    return f"{prefix}{', '.join(engine_names())}"

