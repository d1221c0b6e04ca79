"""The install one-liners a recipe's public JSON carries under ``model.install``.

The published form is the canonical NVIDIA setup on the CUDA 13.0 wheel baseline: a ``pip``
entry (a uv virtual environment plus the stable or nightly vLLM wheel) and a ``docker`` entry
(``docker pull`` of the recipe's NVIDIA image), plus the recipe's ``dependencies`` verbatim
as ``extras``. A recipe tunes each entry under ``model.install``:

* ``pip: false`` / ``docker: false`` leaves that entry out;
* ``{command, note}`` replaces the default command and/or note, field by field.
"""

from __future__ import annotations

from typing import Any

BASE_CUDA = "cu130"
DEFAULT_IMAGE = "vllm/vllm-openai:latest"
_CUDA_TAGS = ("cu129", "cu130")
_BRAND_KEYS = ("nvidia", "amd", "tpu", "intel")

STABLE_PIP = "uv venv\nsource .venv/bin/activate\nuv pip install -U vllm --torch-backend auto"


def nightly_pip(cuda: str = BASE_CUDA) -> str:
    return (
        "uv venv\nsource .venv/bin/activate\nuv pip install -U vllm --pre \\\n"
        f"  --extra-index-url https://wheels.vllm.ai/nightly/{cuda} \\\n"
        f"  --extra-index-url https://download.pytorch.org/whl/{cuda} \\\n"
        "  --index-strategy unsafe-best-match"
    )


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


def _entry(config: Any, default_command: str, default_note: str | None) -> dict[str, str]:
    overrides = config if isinstance(config, dict) else {}
    command = overrides.get("command") or default_command
    note = overrides.get("note") or default_note
    return {"command": command, "note": note} if note else {"command": command}


def synthesize_install(recipe: dict[str, Any]) -> dict[str, Any] | None:
    """The public ``model.install`` object, or None when every entry is switched off."""
    model = recipe.get("model") or {}
    config = model.get("install") or {}
    if not isinstance(config, dict):
        config = {}
    out: dict[str, Any] = {}
    if config.get("pip") is not False:
        nightly = model.get("nightly_required") is True
        version = model.get("min_vllm_version") or ""
        note = f"vLLM {version} isn't released yet \u2014 nightly required." if nightly else None
        out["pip"] = _entry(config.get("pip"), nightly_pip() if nightly else STABLE_PIP, note)
    if config.get("docker") is not False:
        out["docker"] = _entry(config.get("docker"), f"docker pull {nvidia_image(recipe)}", None)
    dependencies = recipe.get("dependencies")
    if isinstance(dependencies, list) and dependencies:
        out["extras"] = dependencies
    return out or None
