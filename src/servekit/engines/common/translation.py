"""What translating a vLLM launch into an engine's own launch produces, and the helpers it shares.

A dialect reads the vLLM argv that synthesis produces (``vllm serve MODEL --flag value ...``)
plus facts about the hardware, and returns an :class:`EngineLaunch`: the argv to run, the env
it needs, an image, steps to run before it (download, compile), every vLLM option that has no
equivalent (with the reason), and findings (error / warning / note, each with a fix).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from servekit.engines.common.findings import ERROR, NOTE, WARNING, Finding, finding
from servekit.engines.common.flags import FlagCatalog
from servekit.records import record

# Env vars only CUDA / NCCL read; other accelerators ignore them.
CUDA_ENV_PREFIXES = ("CUDA_", "NCCL_", "PYTORCH_CUDA_")


@record
class Untranslated:
    """A vLLM option (or env var) the target engine has no equivalent for, and why."""

    flag: str
    value: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"flag": self.flag, "value": self.value, "reason": self.reason}


@record
class PrecompileStep:
    """Something to run before the server starts (cache warm-up, ahead-of-time compile).

    ``argv`` runs as is; ``script`` (when set) is the program text ``argv`` carries, and
    ``kwargs`` the keyword arguments it passes, so a caller can show or reuse them.
    """

    name: str
    description: str
    argv: tuple[str, ...]
    script: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def command(self) -> str:
        return shlex.join(self.argv)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "argv": list(self.argv),
            "command": self.command(),
            "script": self.script,
            "kwargs": dict(self.kwargs),
        }


@record
class EngineLaunch:
    """One engine launch, ready to run, with everything that did not carry over."""

    engine: str
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    precompile: tuple[PrecompileStep, ...] = ()
    untranslated: tuple[Untranslated, ...] = ()
    findings: tuple[Finding, ...] = ()

    @property
    def valid(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    def command(self) -> str:
        return shlex.join(self.argv)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "argv": list(self.argv),
            "command": self.command(),
            "env": dict(self.env),
            "image": self.image,
            "precompile": [step.to_dict() for step in self.precompile],
            "untranslated": [u.to_dict() for u in self.untranslated],
            "findings": [finding_dict(f) for f in self.findings],
            "valid": self.valid,
        }


@record
class DialectContext:
    """What a dialect knows besides the argv.

    ``hardware`` is the plain taxonomy profile mapping (``brand``, ``generation``,
    ``gpu_count``, ``vram_gb``; QAIC profiles add ``soc_count``, ``nsp_cores_per_soc``,
    ``memory_gb_per_soc``). ``options`` carries engine-specific choices (see each dialect).
    """

    hardware: Mapping[str, Any] | None = None
    hardware_id: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    image_named: bool = True
    """Whether the user named ``image`` (``--image``); False where the catalog chose it for vLLM."""
    engine_version: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def split_cuda_env(env: Mapping[str, str], reason: str) -> tuple[dict[str, str], list[Untranslated]]:
    """The env without CUDA-only variables, and those variables as untranslated items."""
    kept = {k: v for k, v in env.items() if not k.startswith(CUDA_ENV_PREFIXES)}
    dropped = [Untranslated(k, v, reason) for k, v in sorted(env.items()) if k.startswith(CUDA_ENV_PREFIXES)]
    return kept, dropped


def unique_findings(findings: Sequence[Finding]) -> list[Finding]:
    """Findings in order, each (severity, code, message) once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in findings:
        key = (f.severity, f.code, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def finding_dict(f: Finding) -> dict[str, Any]:
    return {"severity": f.severity.value, "code": f.code, "message": f.message, "option": f.option, "fix": f.fix}


def engine_image(
    context: DialectContext, repository: str, *, prefix: str, tag: str | None, also: tuple[str, ...] = ()
) -> tuple[str, list[Finding]]:
    """The engine's own image: the given one when it is from ``repository`` (or one of ``also``,
    other repositories whose images run the engine), else ``repository:tag``.

    ``tag`` falls back to ``options["image_tag"]``, then ``latest`` (with a note to pin it); an
    image of another engine is replaced, naming both: a warning where the user named it
    (``DialectContext.image_named``), else a note (the catalog's image serves vLLM, and the engine
    asked for runs from its own).
    """
    chosen = context.options.get("image_tag") or tag or "latest"
    brand = f"{repository}:{chosen}"
    if context.image and context.image.startswith(tuple(f"{r}:" for r in (repository, *also))):
        return context.image, []
    out: list[Finding] = []
    if context.image and context.image_named:
        out.append(
            finding(
                WARNING,
                f"{prefix}.image",
                f"image {context.image} cannot run {prefix}; using {brand}",
                fix=f"run from {repository}",
            )
        )
    elif context.image:
        out.append(finding(NOTE, f"{prefix}.image", f"{prefix} runs from {brand}, not the catalog's {context.image}"))
    if chosen == "latest":
        out.append(
            finding(
                NOTE,
                f"{prefix}.image-tag",
                "the image tag is not pinned",
                fix="pass --vllm-version VERSION, or --image REPOSITORY:TAG",
            )
        )
    return brand, out


def extend_catalog(
    catalog: FlagCatalog,
    *,
    registries: Mapping[str, Sequence[str]] | None = None,
    choices: Mapping[str, Sequence[str]] | None = None,
) -> FlagCatalog:
    """A plugin's view of vLLM's catalog: more registry names and more choices for some flags."""
    new_registries = dict(catalog.registries)
    for name, extra in (registries or {}).items():
        new_registries[name] = tuple(dict.fromkeys((*new_registries.get(name, ()), *extra)))
    flags = tuple(
        dataclasses.replace(spec, choices=tuple(dict.fromkeys((*spec.choices, *choices[spec.name]))))
        if choices and spec.name in choices and spec.choices is not None
        else spec
        for spec in catalog.flags
    )
    return dataclasses.replace(catalog, flags=flags, registries=new_registries)
