"""vLLM releases changed how they account memory and report the pool; one place for the rules.

* From 0.27 on, the CUDA-graph estimate comes out of the KV budget; earlier releases capture
  graphs outside it.
* From 0.21 on, ``GPU KV cache size`` is ``max_concurrency x max_model_len``; earlier releases
  logged ``num_blocks // num_groups x min_block_size``, which under-reports hybrid models.

A version that cannot be read, or an untagged development build (``0.1.devN``), counts as the
newest release.
"""

from __future__ import annotations

import re

CUDAGRAPH_BUDGET_SINCE = (0, 27)
CONCURRENCY_TOKENS_SINCE = (0, 21)

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(dev\d+))?")


def _release(engine_version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a version text, or None for unknown / development builds."""
    match = _VERSION.search(engine_version or "")
    if match is None or match.group(3):
        return None
    return int(match.group(1)), int(match.group(2))


def counts_cudagraphs(engine_version: str | None) -> bool:
    """Whether this vLLM version takes CUDA-graph memory out of the KV budget."""
    release = _release(engine_version)
    return release is None or release >= CUDAGRAPH_BUDGET_SINCE


def reports_concurrency_tokens(engine_version: str | None) -> bool:
    """Whether this vLLM version logs the pool as max_concurrency x max_model_len."""
    release = _release(engine_version)
    return release is None or release >= CONCURRENCY_TOKENS_SINCE
