"""Engine name -> the module that implements it. Adding an engine is one line here."""

from __future__ import annotations

import importlib
from functools import lru_cache

from servekit.engines.base import Engine
from servekit.errors import ServekitError

ENGINE_MODULES: dict[str, str] = {
    "vllm": "servekit.engines.vllm",
    "vllm-qaic": "servekit.engines.qaic",
    "vllm-ascend": "servekit.engines.ascend",
    "max": "servekit.engines.max",
}


class _CatalogOnlyEngine(Engine):
    """Stand-in for an engine whose dialect module is absent: lint against its catalog only."""

    def __init__(self, name: str, catalog_engine: str, commands: tuple[str, ...]) -> None:
        self.name = name
        self.catalog_engine = catalog_engine
        self.commands = commands


_CATALOG_ONLY = {"max": ("max", ("serve", "warm-cache"))}


def engine_names() -> list[str]:
    return list(ENGINE_MODULES)


@lru_cache(maxsize=None)
def get_engine(name: str) -> Engine:
    """The engine called ``name``; unknown names raise a ServekitError listing the known ones."""
    module_name = ENGINE_MODULES.get(name)
    if module_name is None:
        raise ServekitError(f"unknown engine {name!r}", fix=f"use one of: {', '.join(engine_names())}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        module = None
    engine = getattr(module, "ENGINE", None) if module is not None else None
    if isinstance(engine, Engine):
        return engine
    if name in _CATALOG_ONLY:
        catalog_engine, commands = _CATALOG_ONLY[name]
        return _CatalogOnlyEngine(name, catalog_engine, commands)
    raise ServekitError(f"engine {name!r} is not available in this build",
                        fix=f"{module_name} must define ENGINE")
