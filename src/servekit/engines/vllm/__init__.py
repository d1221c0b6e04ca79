"""vLLM, the native engine: every plan is written in its form."""

from servekit.engines.vllm.engine import ENGINE, VllmEngine

__all__ = ["ENGINE", "VllmEngine"]
