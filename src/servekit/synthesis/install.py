"""Install steps and the minimum engine version a plan needs."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from servekit.catalog.domain import ModelSection
from servekit.synthesis import shapes
from servekit.synthesis.context import Context
from servekit.synthesis.plan import InstallStep

BASE_CUDA = "cu130"
PIP_DEFAULT = "uv venv\nsource .venv/bin/activate\nuv pip install -U vllm --torch-backend auto"
PIP_NIGHTLY = (
    "uv venv\nsource .venv/bin/activate\nuv pip install -U vllm --pre \\\n"
    f"  --extra-index-url https://wheels.vllm.ai/nightly/{BASE_CUDA} \\\n"
    f"  --extra-index-url https://download.pytorch.org/whl/{BASE_CUDA} \\\n"
    "  --index-strategy unsafe-best-match"
)


def pip_step(model: ModelSection) -> InstallStep | None:
    """The pip install block (``model.install.pip: false`` drops it; a map overrides it)."""
    tab = model.pip
    if tab.dropped:
        return None
    nightly = model.nightly_required
    default_note = f"vLLM {model.min_vllm_version or ''} isn't released yet — nightly required." if nightly else None
    return InstallStep("pip", tab.command or (PIP_NIGHTLY if nightly else PIP_DEFAULT), tab.note or default_note)


def docker_step(model: ModelSection, image: str | None) -> InstallStep | None:
    tab = model.docker
    if tab.dropped:
        return None
    return InstallStep("docker", tab.command or f"docker pull {image}", tab.note or None)


def install_steps(ctx: Context, image: str | None) -> tuple[InstallStep, ...]:
    steps = [pip_step(ctx.recipe.model), docker_step(ctx.recipe.model, image)]
    for dep in ctx.recipe.dependencies:
        if dep.command:
            steps.append(InstallStep("extra", str(dep.command), dep.note))
    if ctx.kv_store is not None:
        command = shapes.brand_install(ctx, ctx.kv_store.vllm_install)
        if command:
            steps.append(InstallStep("kv_store", command, f"for {ctx.sel.kv_offload}"))
    if ctx.kv_option is not None and ctx.kv_option.install:
        steps.append(InstallStep("kv_offload", str(ctx.kv_option.install), f"for {ctx.sel.kv_offload}"))
    return tuple(s for s in steps if s is not None)


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
