"""A person's own values over a recipe's: ``plan --tp 4 --pp 2 --max-model-len 8192 --image ...``,
as given and checked (``servekit.synthesis.apply_overrides`` lays them over a plan).

Only the record and its checks live here, free of the plan's types: the command line holds a
person's overrides in it without importing the rest of synthesis.
"""

from __future__ import annotations

import dataclasses
import re

from servekit.errors import SelectionError
from servekit.records import record

_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*([a-z0-9.+-]*)")


@record
class Overrides:
    """Values given on the command line; None leaves the recipe's."""

    max_model_len: str | None = None
    tp: int | None = None
    port: int | None = None
    gpu_memory_utilization: float | None = None
    image: str | None = None
    vllm_version: str | None = None
    pp: int | None = None

    def flags(self) -> list[tuple[str, str, str]]:
        """(vLLM flag, value, the option that set it) for each override of an argument."""
        pairs = (("--max-model-len", self.max_model_len, "--max-model-len"),
                 ("--tensor-parallel-size", self.tp, "--tp"),
                 ("--pipeline-parallel-size", self.pp, "--pp"),
                 ("--port", self.port, "--port"),
                 ("--gpu-memory-utilization", self.gpu_memory_utilization, "--gpu-memory-utilization"))
        return [(flag, str(value), option) for flag, value, option in pairs if value is not None]

    def __bool__(self) -> bool:
        return any(value is not None for value in dataclasses.astuple(self))


def checked(overrides: Overrides) -> Overrides:
    """The overrides, or a SelectionError naming the first value that cannot be one."""
    for option, size in (("--tp", overrides.tp), ("--pp", overrides.pp)):
        if size is not None and size < 1:
            raise SelectionError(f"{option} must be 1 or more, got {size}", fix=f"pass {option} 1, 2, 4 or 8")
    if overrides.port is not None and not 1 <= overrides.port <= 65535:
        raise SelectionError(f"--port must be from 1 to 65535, got {overrides.port}", fix="pass --port 8000")
    util = overrides.gpu_memory_utilization
    if util is not None and not 0 < util <= 1:
        raise SelectionError(f"--gpu-memory-utilization must be above 0 and at most 1, got {util}",
                             fix="pass --gpu-memory-utilization 0.9")
    mml = overrides.max_model_len
    if mml is not None and not re.fullmatch(r"[0-9]+[kKmM]?|auto|-1", mml):
        raise SelectionError(f"--max-model-len must be a token count (8192, 32k) or auto, got {mml!r}",
                             fix="pass --max-model-len 8192")
    version = overrides.vllm_version
    if version is not None and not _VERSION.fullmatch(version.removeprefix("v")):
        raise SelectionError(f"--vllm-version must be a version such as 0.11.0, got {version!r}",
                             fix="pass --vllm-version 0.11.0")
    return overrides
