"""servekit: exact, checked launch plans for LLM servers from recipe catalogs.

Python API::

    import servekit
    catalog = servekit.Catalog.load()          # or Catalog.load("path/to/catalog")
    plan = catalog.plan("Qwen/Qwen3.8-27B", hardware="b200", variant="nvfp4")
    print(catalog.render(plan)["command"])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Catalog", "Plan", "Selection", "ServekitError", "__version__"]

if TYPE_CHECKING:
    from servekit.app.catalog import Catalog
    from servekit.errors import ServekitError
    from servekit.synthesis.plan import Plan, Selection

_LAZY = {
    "Catalog": "servekit.app.catalog",
    "Plan": "servekit.synthesis.plan",
    "Selection": "servekit.synthesis.plan",
    "ServekitError": "servekit.errors",
}


def __getattr__(name: str) -> Any:
    """Import on first use, so ``import servekit`` stays cheap for the CLI."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'servekit' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
