"""Every engine servekit knows, by id: the only place outside the engine packages that names them.

Adding an engine is one line in ``_BUILTIN``: its id and the package whose ``ENGINE`` attribute
is the engine. A package is imported the first time its engine is asked for, so listing the
engines (``engine_names``) or planning for one engine imports no other. Aliases are the
engines' own (``Engine.aliases``); a name that is not an id loads the engines to look for it.
Tests add engines of their own with :func:`register` (it returns the undo) or the
:func:`registered` context manager.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from servekit.engines.common.engine import Engine
from servekit.errors import ServekitError

_BUILTIN: tuple[tuple[str, str], ...] = (
    ("vllm", "servekit.engines.vllm"),
    ("vllm-qaic", "servekit.engines.qaic"),
    ("vllm-ascend", "servekit.engines.ascend"),
    ("max", "servekit.engines.max"),
    ("sglang", "servekit.engines.sglang"),
)
_NATIVE = "vllm"  # plans are written in its form
_engines: dict[str, Engine | str] = dict(_BUILTIN)
"""Engine id -> the engine, or the package to import it from."""


def _load(engine_id: str) -> Engine:
    entry = _engines[engine_id]
    if isinstance(entry, Engine):
        return entry
    engine = getattr(importlib.import_module(entry), "ENGINE", None)
    if not isinstance(engine, Engine) or engine.id != engine_id:
        raise ServekitError(f"{entry}.ENGINE is not the engine {engine_id!r}",
                            fix=f"give {entry} an ENGINE whose id is {engine_id!r}")
    _engines[engine_id] = engine
    return engine


def engine_names() -> list[str]:
    """Every engine id, the native engine first (no engine package is imported)."""
    return list(_engines)


def engines() -> list[Engine]:
    return [_load(engine_id) for engine_id in _engines]


def native_engine() -> Engine:
    """The engine plans are written in (vLLM); every other engine translates from it."""
    return _load(_NATIVE)


def engine_for_platform(platform: str) -> Engine:
    """The engine a plain vLLM launch runs as on a hardware platform (a vLLM fork or plugin
    declares its platforms); the native engine where none does."""
    native = native_engine()
    if platform in native.vllm_platforms:
        return native
    return next((e for e in engines() if platform in e.vllm_platforms), native)


def get_engine(name: str) -> Engine:
    """The engine called ``name`` (an id or alias); unknown names raise a ServekitError listing the known ones."""
    if name in _engines:
        return _load(name)
    known = engines()
    engine = next((e for e in known if name in e.aliases), None)
    if engine is not None:
        return engine
    near = difflib.get_close_matches(name, [n for e in known for n in e.names], n=1, cutoff=0.5)
    closest = f"; the closest known engine is {near[0]!r}" if near else ""
    raise ServekitError(f"unknown engine {name!r}{closest}", fix=f"use one of: {', '.join(engine_names())}")


def engine_for_argv(argv: Sequence[str]) -> Engine:
    """The engine whose command line ``argv`` is (its program words); the native engine otherwise."""
    native = native_engine()
    others = [e for e in engines() if e is not native and e.recognizes(argv)]
    return others[0] if others else native


def register(engine: Engine) -> Callable[[], None]:
    """Add ``engine`` (or replace the one with its id); call the result to undo it."""
    if not isinstance(engine, Engine):
        raise ServekitError(f"{engine!r} is not an Engine", fix="subclass servekit.engines.common.engine.Engine")
    before = _engines.get(engine.id)
    _engines[engine.id] = engine

    def undo() -> None:
        if before is None:
            _engines.pop(engine.id, None)
        else:
            _engines[engine.id] = before

    return undo


@contextmanager
def registered(engine: Engine) -> Iterator[Engine]:
    """``engine`` is known inside the ``with`` block only."""
    undo = register(engine)
    try:
        yield engine
    finally:
        undo()
