"""vLLM on Qualcomm Cloud AI 100 (``--engine vllm-qaic``)."""

from servekit.engines.qaic.engine import ENGINE, QaicEngine

__all__ = ["ENGINE", "QaicEngine"]
