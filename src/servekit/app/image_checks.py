"""Deployment check: the container image is built for the platform of the hardware it runs on.

An image family's builds serve the platforms its facts name (``ImageFacts.platforms``, from the
Dockerfile or documentation each entry cites): a CUDA image on ROCm, Ascend or TPU hardware finds
no device its build drives. A vLLM-Omni launch (``vllm serve --omni``) needs an image that carries
vLLM-Omni (``ImageFacts.omni``); vLLM's own images do not, and their ``vllm serve`` refuses
``--omni``. An image no family names is not judged.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.findings import Finding
from servekit.hardware.profile import HardwareProfile
from servekit.synthesis.images import ImageFacts, image_facts, omni_repositories

CODE = "image-platform"
OMNI_CODE = "image-without-omni"


def image_platform_findings(image: str | None, profile: HardwareProfile | None,
                            more: Sequence[ImageFacts] = ()) -> list[Finding]:
    facts = image_facts(image, more)
    if facts is None or profile is None or not facts.platforms or profile.platform in facts.platforms:
        return []
    return [Finding(
        "error", CODE,
        f"{image} is built for {' / '.join(facts.platforms)}, but {profile.id} runs {profile.platform}: "
        "its build drives none of this hardware's devices",
        f"use an image built for {profile.platform} (without --image the plan picks the platform's own), "
        f"or pass --image with one; the image's facts: {facts.source}")]


def image_omni_findings(image: str | None, profile: HardwareProfile | None,
                        more: Sequence[ImageFacts] = ()) -> list[Finding]:
    """An error when a vLLM-Omni launch runs in an image known to carry no vLLM-Omni."""
    facts = image_facts(image, more)
    if facts is None or facts.omni:
        return []
    platform = profile.platform if profile is not None else ""
    known = omni_repositories(platform)
    where = (f"a vLLM-Omni image ({', '.join(known)}, at the tag of the vLLM-Omni release you run)"
             if known else "an image with vLLM-Omni installed")
    return [Finding(
        "error", OMNI_CODE,
        f"{image} carries no vLLM-Omni: vLLM's CLI hands --omni to the vllm_omni package and exits when it is "
        "not installed (vllm/entrypoints/cli/main.py)",
        f"pass --image with {where}, or run the form without --docker with vLLM-Omni installed beside vLLM; "
        f"the image's facts: {facts.source}")]
