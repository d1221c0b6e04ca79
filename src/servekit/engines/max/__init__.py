"""Modular MAX (``--engine max``)."""

from servekit.engines.max.engine import ENGINE, MaxEngine

__all__ = ["ENGINE", "MaxEngine"]
