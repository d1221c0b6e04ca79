"""vLLM on Huawei Ascend NPUs through the vLLM Ascend plugin (``--engine vllm-ascend``)."""

from servekit.engines.ascend.engine import ENGINE, AscendEngine

__all__ = ["ENGINE", "AscendEngine"]
