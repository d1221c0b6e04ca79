"""Install steps and the minimum engine version a plan needs.

The steps follow the plan's platform family (``servekit.synthesis.install_families``): the pip
step of that family (or a comment saying it has none), the container pull, the recipe's extra
dependencies (those of the hardware's brand, each in the install forms it names) and the
KV-offload packages. Each step carries the page or recipe key it follows
(``InstallStep.source``). A recipe's own ``model.install.pip`` command wins on every platform,
as on the recipes site; ``model.install.pip: false`` drops the step.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from servekit.catalog.domain import ModelSection
from servekit.hardware import HardwareProfile
from servekit.synthesis import shapes
from servekit.synthesis.context import Context
from servekit.synthesis.images import image_facts
from servekit.synthesis.install_families import (
    BASE_CUDA,
    CUDA,
    FAMILIES,
    PIP_DEFAULT,
    PIP_NIGHTLY,
    InstallFamily,
    family_for,
)
from servekit.synthesis.plan import PIP_FORM, InstallStep

__all__ = ["BASE_CUDA", "PIP_DEFAULT", "PIP_NIGHTLY", "connector_steps", "docker_step", "install_steps", "min_version",
           "pinned_steps", "pip_step", "platform_steps"]

RECIPE_PIP = "model.install.pip"
RECIPE_DOCKER = "model.install.docker"
_UNPINNED = "uv pip install -U vllm "


def _nightly_note(model: ModelSection) -> str | None:
    return f"vLLM {model.min_vllm_version or ''} isn't released yet — nightly required." if model.nightly_required else None


def pip_step(model: ModelSection, family: InstallFamily = CUDA, version: str | None = None) -> InstallStep | None:
    """The pip install block of ``family`` (``model.install.pip: false`` drops it; its command wins)."""
    tab = model.pip
    if tab.dropped:
        return None
    if tab.command:
        return InstallStep("pip", tab.command, tab.note or _nightly_note(model), RECIPE_PIP, family.id)
    command = family.pip_command(version, nightly=model.nightly_required)
    if command is None:
        reason = family.no_pip or (f"vLLM {version} has no {family.label} wheel (the first is {family.pip.since}); "
                                   "use the container (the docker form) or build from source")
        return InstallStep("pip", f"# {family.label} has no pip install: {reason}", tab.note, family.source, family.id)
    notes = [n for n in (tab.note or (_nightly_note(model) if not version else None),
                         family.pip.note if family.pip else None) if n]
    return InstallStep("pip", command, "; ".join(notes) or None, family.source, family.id)


def docker_step(model: ModelSection, image: str | None, source: str = "") -> InstallStep | None:
    """``docker pull`` of the plan's image; its source is the image family's (its Dockerfile or
    documented configuration), else ``source`` (where the plan took the image from)."""
    tab = model.docker
    if tab.dropped:
        return None
    if tab.command:
        return InstallStep("docker", tab.command, tab.note or None, RECIPE_DOCKER)
    if image is None:
        return None  # no image on this hardware: no container form
    facts = image_facts(image)
    return InstallStep("docker", f"docker pull {image}", tab.note or None, facts.source if facts else source)


def _prerequisite(family: InstallFamily, version: str | None) -> InstallStep | None:
    if family.prerequisite is None:
        return None
    chosen = (version or family.version_pinned or "").removeprefix("v")
    note = family.prerequisite_note.replace("{version}", chosen) if family.prerequisite_note else None
    return InstallStep("prerequisite", family.prerequisite, note, family.source, family.id)


def platform_steps(model: ModelSection, hw: HardwareProfile, image: str | None, *, image_source: str = "",
                   version: str | None = None) -> tuple[InstallStep, ...]:
    """The prerequisite, pip and docker steps of ``hw``'s platform family."""
    family = family_for(hw.platform, hw.cpu_arch)
    steps = (_prerequisite(family, version), pip_step(model, family, version), docker_step(model, image, image_source))
    return tuple(s for s in steps if s is not None)


def install_steps(ctx: Context, image: str | None, image_source: str = "") -> tuple[InstallStep, ...]:
    steps = list(platform_steps(ctx.recipe.model, ctx.hw, image, image_source=image_source))
    for i, dep in enumerate(ctx.recipe.dependencies):
        if dep.command and dep.applies_to(ctx.hw.brand):
            steps.append(InstallStep("extra", str(dep.command), dep.note, f"dependencies[{i}]",
                                     forms=dep.install_modes or (PIP_FORM,), optional=dep.optional))
    if ctx.kv_store is not None:
        command = shapes.brand_install(ctx, ctx.kv_store.vllm_install)
        if command:
            steps.append(InstallStep("kv_store", command, f"for {ctx.sel.kv_offload}",
                                     f"kv_store/{ctx.sel.kv_offload}.vllm.install"))
    if ctx.kv_option is not None and ctx.kv_option.install:
        steps.append(InstallStep("kv_offload", str(ctx.kv_option.install), f"for {ctx.sel.kv_offload}",
                                 f"taxonomy.kv_offload.{ctx.sel.kv_offload}.install"))
    return tuple(steps)


NIXL_SOURCE = "https://docs.vllm.ai/en/stable/features/nixl_connector_usage.html (Installation)"
CONNECTOR_WHEELS = {"NixlConnector": {"cuda": "uv pip install nixl"}}
"""KV connectors whose library vLLM's wheels leave out, and the wheel per platform. vLLM's images
carry them (built with its KV-connector requirements), so only the pip form installs them."""


def connector_steps(argvs: Iterable[Sequence[Any]], hw: HardwareProfile) -> tuple[InstallStep, ...]:
    """The install step of each KV connector the servers name (``--kv-transfer-config``) whose
    library is not in vLLM's wheel: its wheel on this platform, or how to build it."""
    named: list[str] = []
    for argv in argvs:
        words = [str(w) for w in argv]
        for at, word in enumerate(words[:-1]):
            if word == "--kv-transfer-config":
                try:
                    connector = json.loads(words[at + 1]).get("kv_connector")
                except (ValueError, AttributeError):
                    continue
                if connector in CONNECTOR_WHEELS and connector not in named:
                    named.append(connector)
    steps = []
    for connector in named:
        wheel = CONNECTOR_WHEELS[connector].get(hw.platform)
        command = wheel or (f"# {connector}'s library has no wheel for {hw.platform}: build NIXL with UCX from "
                            "source (tools/install_nixl_from_source_ubuntu.py in vLLM's source tree)")
        steps.append(InstallStep("kv_connector", command, f"for {connector}", NIXL_SOURCE, forms=(PIP_FORM,)))
    return tuple(steps)


def pinned_steps(steps: tuple[InstallStep, ...], version: str, image: str | None) -> tuple[InstallStep, ...]:
    """``steps`` for release ``version``: each family step re-rendered at it, a recipe's own pip
    command with ``vllm`` pinned, the docker step pulling ``image``."""
    out = []
    for step in steps:
        if step.kind == "docker" and image and step.source != RECIPE_DOCKER:
            out.append(docker_step(ModelSection.of({}), image, step.source) or step)
        elif step.kind in ("pip", "prerequisite") and step.family and step.source != RECIPE_PIP:
            out.append(_family_step(step, version))
        elif step.kind == "pip" and _UNPINNED in step.command:
            out.append(replace(step, command=step.command.replace(
                _UNPINNED, f'uv pip install "vllm=={version.removeprefix("v")}" ')))
        else:
            out.append(step)
    return tuple(out)


def _family_step(step: InstallStep, version: str) -> InstallStep:
    family = FAMILIES[step.family]
    if step.kind == "prerequisite":
        return _prerequisite(family, version) or step
    return pip_step(ModelSection.of({}), family, version) or step


def min_version(ctx: Context) -> tuple[str | None, tuple[str, ...]]:
    """Highest ``min_vllm_version`` of recipe, variant, enabled features / modes and KV option.

    Versions compare as versions (0.9 < 0.17); a value that is no version (``nightly``)
    wins only when nothing else is declared.
    """
    declared = [(ctx.recipe.model.min_vllm_version, "model.min_vllm_version"),
                (ctx.variant.min_vllm_version, f"{ctx.variant_path}.min_vllm_version")]
    for key, feature, mode in ctx.enabled_features():
        declared.append((feature.min_vllm_version, f"features.{key}.min_vllm_version"))
        if mode and feature.modes is not None:
            declared.append((feature.modes[mode].min_vllm_version,
                             f"features.{key}.modes.{mode}.min_vllm_version"))
    if ctx.kv_store is not None:
        declared.append((ctx.kv_store.min_vllm_version, f"kv_store/{ctx.sel.kv_offload}.min_vllm_version"))
    if ctx.kv_option is not None:
        declared.append((ctx.kv_option.min_vllm_version,
                         f"taxonomy.kv_offload.{ctx.sel.kv_offload}.min_vllm_version"))
    best: tuple[Any, str, str] | None = None
    fallback: tuple[str, str] | None = None
    for raw, source in declared:
        if raw in (None, ""):
            continue
        parsed = _version(str(raw))
        if parsed is None:
            fallback = fallback or (str(raw), source)
            continue
        if best is None or parsed > best[0]:
            best = (parsed, str(raw), source)
    if best is not None:
        return best[1], (best[2],)
    return (fallback[0], (fallback[1],)) if fallback else (None, ())


@lru_cache(maxsize=1024)
def _version(text: str):
    """``packaging`` Version of a declared version, or None when it is not one (``nightly``)."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None
