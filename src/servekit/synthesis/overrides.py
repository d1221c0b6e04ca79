"""A person's own values over a recipe's: ``plan --tp 4 --pp 2 --max-model-len 8192 --image ...``.

Each override replaces the recipe's value of one flag in every serve process (or adds the flag
where the recipe has none) and says so in the provenance (``override: --tp``), so the checks and
the "why" lines see it like any other argument. ``--vllm-version`` pins the install step and
the default image's tag; ``--image`` replaces the image.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from servekit.errors import SelectionError
from servekit.synthesis.install import pinned_steps
from servekit.synthesis.plan import Arg, Docker, Plan, Process

_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*([a-z0-9.+-]*)")


@dataclass(frozen=True)
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


def _with_flag(args: tuple[Arg, ...], flag: str, value: str, option: str) -> tuple[Arg, ...]:
    source = f"override: {option}"
    if any(arg.flag == flag for arg in args):
        return tuple(Arg(flag, value, source) if arg.flag == flag else arg for arg in args)
    return (*args, Arg(flag, value, source))


def _process(proc: Process, overrides: Overrides) -> Process:
    args = proc.args
    for flag, value, option in overrides.flags():
        args = _with_flag(args, flag, value, option)
    port = overrides.port if overrides.port is not None else proc.port
    return dataclasses.replace(proc, args=args, port=port)


def pinned_image(image: str | None, version: str) -> str | None:
    """The vLLM project's image at ``version`` (``vllm/vllm-openai:v0.11.0``); other images as they are."""
    if image is None or not image.startswith("vllm/"):
        return image
    name, _, tag = image.partition(":")
    if tag.startswith(("latest", "nightly")) or not tag:
        suffix = tag.partition("-")[2] if tag.startswith("latest-") else ""
        return f"{name}:v{version.removeprefix('v')}" + (f"-{suffix}" if suffix else "")
    return image


def _docker(plan: Plan, overrides: Overrides) -> Docker:
    if overrides.image:
        return dataclasses.replace(plan.docker, image=overrides.image, source="override: --image")
    if overrides.vllm_version:
        image = pinned_image(plan.docker.image, overrides.vllm_version)
        if image != plan.docker.image:
            return dataclasses.replace(plan.docker, image=image, source="override: --vllm-version")
    return plan.docker


def apply_overrides(plan: Plan, overrides: Overrides) -> Plan:
    """``plan`` with every override applied to each vLLM process, the image and the install steps."""
    if not overrides:
        return plan
    vllm = [p for p in plan.processes if p.program == ("vllm", "serve")]
    if overrides.port is not None and len(vllm) > 1 and plan.deploy_type != "multi_node":
        raise SelectionError(f"--port sets one port, but this {plan.deploy_type} plan starts {len(vllm)} servers",
                             fix="leave out --port for this strategy, or pick a single-node strategy with --strategy")
    processes = tuple(_process(p, overrides) if p in vllm else p for p in plan.processes)
    docker = _docker(plan, overrides)
    install = plan.install
    if overrides.vllm_version:
        install = pinned_steps(plan.install, overrides.vllm_version, docker.image)
    elif overrides.image:
        install = tuple(dataclasses.replace(s, command=f"docker pull {docker.image}", source="override: --image")
                        if s.kind == "docker" else s for s in plan.install)
    return dataclasses.replace(plan, processes=processes, docker=docker, install=install)
