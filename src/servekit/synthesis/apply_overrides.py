"""Overrides laid over a plan (``servekit.synthesis.overrides.Overrides``).

Each override replaces the recipe's value of one flag in every serve process (or adds the flag
where the recipe has none) and says so in the provenance (``override: --tp``), so the checks and
the "why" lines see it like any other argument. ``--vllm-version`` pins the install step and
the default image's tag; ``--image`` replaces the image.
"""

from __future__ import annotations

import dataclasses

from servekit.errors import SelectionError
from servekit.synthesis.install import pinned_steps
from servekit.synthesis.overrides import Overrides
from servekit.synthesis.plan import Arg, Docker, Plan, Process


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


IMAGE_OVERRIDE = "override: --image"
"""``Docker.source`` of an image the user named with ``--image`` (``image_named``)."""


def image_named(docker: Docker) -> bool:
    """Whether the user named the plan's image (``--image``) rather than the catalog or a pinned
    release choosing it."""
    return docker.source == IMAGE_OVERRIDE


def _docker(plan: Plan, overrides: Overrides) -> Docker:
    if overrides.image:
        return dataclasses.replace(plan.docker, image=overrides.image, source=IMAGE_OVERRIDE)
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
        install = tuple(dataclasses.replace(s, command=f"docker pull {docker.image}", source=IMAGE_OVERRIDE)
                        if s.kind == "docker" else s for s in plan.install)
    return dataclasses.replace(plan, processes=processes, docker=docker, install=install)
