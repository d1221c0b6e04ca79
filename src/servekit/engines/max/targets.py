"""Where MAX runs: the compile target of a hardware profile, the platforms it has no backend for, its images."""

from __future__ import annotations

import re

from servekit.engines.common.findings import ERROR, NOTE, Finding, finding
from servekit.engines.common.translation import DialectContext, engine_image
from servekit.engines.max.specs import DEFAULT_VERSION
from servekit.hardware import HardwareProfile, profile_of
from servekit.synthesis.images import ImageFacts

TARGET_APIS = ("cuda", "hip", "metal")
_TARGET = re.compile(r"^(cuda|hip|metal)(:[A-Za-z0-9_]+)?$")
UNSUPPORTED_PLATFORMS = ("tpu", "xpu", "ascend", "qaic")
"""Platforms MAX 26.7 has no backend for."""
TARGETED_PLATFORMS = ("cuda", "rocm")
"""Platforms whose devices MAX compiles for a named target (``HardwareProfile.compute_target``)."""
IMAGE_REPOSITORIES = {
    "nvidia": "docker.modular.com/modular/max-nvidia-full",
    "amd": "docker.modular.com/modular/max-amd",
}
"""MAX images by the profile's ``image_key``."""
IMAGES = tuple(
    ImageFacts((repository, repository.removeprefix("docker.modular.com/")), ("max", "serve"), (), False, (platform,),
               "https://docs.modular.com/max/container (the container runs max serve; its arguments are max serve "
               "options)")
    for repository, platform in ((IMAGE_REPOSITORIES["nvidia"], "cuda"), (IMAGE_REPOSITORIES["amd"], "rocm")))
"""Facts of the MAX containers: their entrypoint serves, the arguments are ``max serve`` options."""


def _profile(context: DialectContext) -> HardwareProfile | None:
    return profile_of(context.hardware, context.hardware_id) if context.hardware else None


def image_for(context: DialectContext) -> tuple[str | None, list[Finding]]:
    """The MAX container for the hardware's GPU platform (none for CPU or unknown hardware)."""
    profile = _profile(context)
    repository = IMAGE_REPOSITORIES.get(profile.image_key) if profile else None
    if repository is None:
        if context.image and "modular/max" not in context.image:
            return None, [
                finding(
                    NOTE,
                    "max.image",
                    f"image {context.image} is not a MAX image; none is set",
                    fix="install MAX with pip (max[serve]) or pass a MAX image",
                )
            ]
        return context.image, []
    return engine_image(context, repository, prefix="max", tag=context.engine_version or DEFAULT_VERSION)


def hardware_findings(context: DialectContext) -> list[Finding]:
    profile = _profile(context)
    if profile is not None and profile.platform in UNSUPPORTED_PLATFORMS:
        generation = (profile.generation or profile.platform).lower()
        return [
            finding(
                ERROR,
                "max.hardware",
                f"MAX 26.7 has no backend for {context.hardware_id or generation} ({generation})",
                fix="serve on NVIDIA or AMD GPUs or a CPU, or use another engine",
            )
        ]
    return []


def auto_target(context: DialectContext) -> tuple[str | None, list[Finding]]:
    """The compile target of the hardware: its profile's, none for a CPU host or hardware MAX
    does not serve (``hardware_findings`` reports that), an error for a GPU without a known one."""
    profile = profile_of(context.hardware, context.hardware_id)
    if profile.platform not in TARGETED_PLATFORMS:
        return None, []
    if profile.compute_target is None:
        return None, [
            finding(
                ERROR,
                "max.target-unknown",
                f"no MAX compile target known for hardware {context.hardware_id!r}",
                option="--target",
                fix="pass the target explicitly, e.g. cuda:sm_90 or hip:gfx942",
            )
        ]
    return profile.compute_target, []


def resolve_target(context: DialectContext) -> tuple[str | None, list[Finding]]:
    """The warm-cache ``--target``: given, derived from the hardware (``"auto"``), or none."""
    target = context.options.get("target")
    if not target:
        return None, []
    if target == "auto":
        return auto_target(context)
    if not _TARGET.match(str(target)):
        return None, [
            finding(
                ERROR,
                "max.target-format",
                f"--target {target!r} is not API[:ARCH]",
                option="--target",
                fix="use cuda, cuda:sm_90, hip:gfx942 or metal",
            )
        ]
    return str(target), []
