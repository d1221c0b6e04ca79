"""SGLang (``--engine sglang``): planned, linted and rendered here; launched from its container image."""

from servekit.engines.sglang.engine import ENGINE, SglangEngine

__all__ = ["ENGINE", "SglangEngine"]
