"""The install one-liners a recipe's public JSON carries under ``model.install``.

The published form is the canonical NVIDIA setup on the CUDA 13.0 baseline: the ``pip`` and
``docker`` install steps of the synthesis (``servekit.synthesis.install``, which also owns the
``model.install`` overrides), the docker step pulling the recipe's NVIDIA image regardless of
variant or nightly status, plus the recipe's ``dependencies`` verbatim as ``extras``.
"""

from __future__ import annotations

from typing import Any

from servekit.synthesis.install import docker_step, pip_step
from servekit.synthesis.plan import InstallStep

BASE_CUDA = "cu130"
DEFAULT_IMAGE = "vllm/vllm-openai:latest"
_CUDA_TAGS = ("cu129", "cu130")
_BRAND_KEYS = ("nvidia", "amd", "tpu", "intel")


def _is_cuda_map(value: Any) -> bool:
    return isinstance(value, dict) and any(tag in value for tag in _CUDA_TAGS)


def _from_cuda_map(images: dict[str, Any], cuda: str) -> str:
    for key in (cuda, *_CUDA_TAGS):
        if images.get(key):
            return images[key]
    return DEFAULT_IMAGE


def nvidia_image(recipe: dict[str, Any], cuda: str = BASE_CUDA) -> str:
    """The recipe's NVIDIA container image for ``cuda``, from ``model.docker_image``.

    ``docker_image`` is a plain tag, a ``{cu129, cu130}`` map, or a brand-keyed map whose
    ``nvidia`` entry is either of those; anything else means the upstream default image.
    """
    chosen = (recipe.get("model") or {}).get("docker_image")
    if not chosen:
        return DEFAULT_IMAGE
    if isinstance(chosen, str):
        return chosen
    if not isinstance(chosen, dict):
        return DEFAULT_IMAGE
    if any(brand in chosen for brand in _BRAND_KEYS):
        nvidia = chosen.get("nvidia")
        if isinstance(nvidia, str):
            return nvidia
        return _from_cuda_map(nvidia, cuda) if _is_cuda_map(nvidia) else DEFAULT_IMAGE
    return _from_cuda_map(chosen, cuda) if _is_cuda_map(chosen) else DEFAULT_IMAGE


def _step_json(step: InstallStep | None) -> dict[str, str] | None:
    if step is None:
        return None
    return {"command": step.command, "note": step.note} if step.note else {"command": step.command}


def synthesize_install(recipe: dict[str, Any]) -> dict[str, Any] | None:
    """The public ``model.install`` object, or None when every entry is switched off."""
    out: dict[str, Any] = {}
    pip = _step_json(pip_step(recipe))
    if pip:
        out["pip"] = pip
    docker = _step_json(docker_step(recipe, nvidia_image(recipe)))
    if docker:
        out["docker"] = docker
    dependencies = recipe.get("dependencies")
    if isinstance(dependencies, list) and dependencies:
        out["extras"] = dependencies
    return out or None
