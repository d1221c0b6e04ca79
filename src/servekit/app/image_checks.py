"""Deployment check: the container image is built for the platform of the hardware it runs on.

An image family's builds serve the platforms its facts name (``ImageFacts.platforms``, from the
Dockerfile or documentation each entry cites): a CUDA image on ROCm, Ascend or TPU hardware finds
no device its build drives. An image no family names is not judged.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.findings import Finding
from servekit.hardware.profile import HardwareProfile
from servekit.synthesis.images import ImageFacts, image_facts

CODE = "image-platform"


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
