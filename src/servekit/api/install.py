"""The install one-liners a recipe's public JSON carries under ``model.install``.

The published form is the canonical NVIDIA setup on the CUDA 13.0 baseline: the ``pip`` and
``docker`` install steps of the synthesis (``servekit.synthesis.install``, which also owns the
``model.install`` overrides), the docker step pulling the recipe's NVIDIA image regardless of
variant or nightly status, plus the recipe's ``dependencies`` verbatim as ``extras``.
"""

from __future__ import annotations

from typing import Any

from servekit.catalog.domain import ModelSection
from servekit.synthesis.docker import DEFAULT_IMAGES, image_override
from servekit.synthesis.install import docker_step, pip_step
from servekit.synthesis.plan import InstallStep

BASE_CUDA = "cu130"
DEFAULT_IMAGE = DEFAULT_IMAGES["nvidia"]


def nvidia_image(recipe: dict[str, Any], cuda: str = BASE_CUDA) -> str:
    """The recipe's NVIDIA container image for ``cuda``, from ``model.docker_image`` only.

    A CUDA-keyed map gives its ``cuda`` tag (else whichever it has); anything that names no
    NVIDIA image means the upstream default image (never the nightly one).
    """
    pinned, cuda_map = image_override((recipe.get("model") or {}).get("docker_image"), "nvidia")
    if pinned:
        return pinned
    if cuda_map:
        return cuda_map.get(cuda) or cuda_map.get("cu129") or cuda_map.get("cu130") or DEFAULT_IMAGE
    return DEFAULT_IMAGE


def _step_json(step: InstallStep | None) -> dict[str, str] | None:
    if step is None:
        return None
    return {"command": step.command, "note": step.note} if step.note else {"command": step.command}


def synthesize_install(recipe: dict[str, Any]) -> dict[str, Any] | None:
    """The public ``model.install`` object, or None when every entry is switched off."""
    out: dict[str, Any] = {}
    model = ModelSection.of(recipe.get("model"))
    pip = _step_json(pip_step(model))
    if pip:
        out["pip"] = pip
    docker = _step_json(docker_step(model, nvidia_image(recipe)))
    if docker:
        out["docker"] = docker
    dependencies = recipe.get("dependencies")
    if isinstance(dependencies, list) and dependencies:
        out["extras"] = dependencies
    return out or None
