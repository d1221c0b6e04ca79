"""Which engine release one form of a plan runs, read from the plan's own artifacts.

A plan is checked against a stored flag catalog, but what runs is what the plan installs: the
native form runs the release its pip step installs (``vllm==X`` when pinned; a nightly build when
the recipe needs one; else the newest release, which servekit pins as its default catalog, or the
recipe's ``min_vllm_version`` when that is newer still); the container form runs the release its
image carries (a version tag of a vLLM image, ``nightly``, or ``latest`` of the vLLM project's own
images); a vLLM-Omni process runs vLLM-Omni, whose options extend ``vllm serve``.

``RunRelease.version`` is the release number when the plan names one (and a stored catalog may
match it); ``what`` says it for people and ``settles`` which catalog would decide a name the
checked catalog does not know.
"""

from __future__ import annotations

import re

from servekit.engines.common.flags import version_key
from servekit.records import record
from servekit.synthesis.plan import Plan, Process

EXTRACTOR = "scripts/extract_vllm_flags.py"
_PINNED = re.compile(r"(?<![\w.-])vllm==v?([0-9]+(?:\.[0-9]+)*)")
_BUILT = re.compile(r"git clone\b[^\n]*?(?:--branch[ =]|-b )v?([0-9]+\.[0-9]+(?:\.[0-9]+)?)\s[^\n]*?"
                    r"github\.com/vllm-project/vllm(?:\.git)?(?=[\s/]|$)")
"""A clone of vLLM's own repository at a release tag (not vllm-ascend, vllm-omni ...), to build."""
_TAG_VERSION = re.compile(r"v?([0-9]+\.[0-9]+(?:\.[0-9]+)?)(?:[-+._].*)?")
PROJECT_IMAGES = "vllm/"
"""The vLLM project's own images on Docker Hub (``vllm/vllm-openai``, ``vllm/vllm-openai-rocm``,
``vllm/vllm-tpu`` ...), whose ``latest`` and ``nightly`` tags follow vLLM's releases and nightly
builds (https://hub.docker.com/u/vllm)."""


@record
class RunRelease:
    """The release one form of a plan runs."""

    version: str | None
    """A release number a stored catalog may match (``0.25.0``); None when the plan names none."""
    what: str
    """For people: ``vLLM 0.25.0 (the tag of vllm/vllm-openai:v0.25.0)``."""
    settles: str
    """The catalog that would decide a name the checked catalog does not know."""
    pinned: bool = True
    """The plan names this release (a pin, a tag); False where it is the newest release servekit
    pins standing in for an unpinned install or a ``latest`` image, which may run a newer one."""


def _release_catalog(version: str) -> str:
    return f"a vLLM {version} flag catalog ({EXTRACTOR} run with vLLM {version})"


def numbered(version: str, what: str, pinned: bool = True) -> RunRelease:
    return RunRelease(version, what, _release_catalog(version), pinned)


def full_version(version: str) -> str:
    """``0.25`` as ``0.25.0``: stored catalogs are named by three-part versions."""
    return version if version.count(".") >= 2 else f"{version}.0"


def pinned_by_install(plan: Plan) -> str | None:
    """The vLLM release a pip or extra install step pins (``vllm==0.25.0``), if one does."""
    for step in plan.install:
        if step.kind in ("pip", "extra"):
            found = _PINNED.search(step.command)
            if found:
                return full_version(found.group(1))
    return None


def installed_by_extra(plan: Plan) -> tuple[str, str] | None:
    """(release, step source) of the last extra step of the native form that puts a vLLM release
    in place: pins it (``vllm==0.26.0``) or builds vLLM's own repository at a release tag
    (``git clone --branch v0.26.0 https://github.com/vllm-project/vllm.git``). Extra steps run
    after the pip step, so the last of them decides what runs."""
    found = None
    for step in plan.install:
        if step.kind != "extra" or not step.runs_in(False):
            continue
        match = _PINNED.search(step.command) or _BUILT.search(step.command)
        if match:
            found = (full_version(match.group(1)), step.source or "an extra install step")
    return found


def native_release(plan: Plan, *, nightly: bool, default: str, pinned: str | None = None) -> RunRelease:
    """What the native form's install steps put in place: ``pinned`` (the release the plan or its
    engine names), else the one an install step pins, else as the module says; ``default`` is the
    pinned catalog's release, taken as the newest one an unpinned ``pip install -U`` gets."""
    later = installed_by_extra(plan)
    if later:
        return numbered(later[0], f"vLLM {later[0]} ({later[1]} puts it in place after the pip step)")
    if pinned:
        full = full_version(pinned.removeprefix("v"))
        return numbered(full, f"vLLM {full} (the release the plan installs)")
    pinned = pinned_by_install(plan)
    if pinned:
        return numbered(pinned, f"vLLM {pinned} (its install step pins it)")
    if nightly:
        return RunRelease(None, "a nightly vLLM build (model.nightly_required)",
                          f"a catalog of that nightly build ({EXTRACTOR} run with it)")
    least = plan.min_version
    if least and version_key(least)[0] and version_key(full_version(least)) > version_key(default):
        full = full_version(least)
        return numbered(full, f"vLLM {full} or newer (min_vllm_version), newer than the pinned {default}")
    return numbered(default, f"vLLM {default}, the newest release servekit pins (the install step is unpinned)",
                    pinned=False)


def image_release(image: str, *, default: str) -> RunRelease:
    """The release a container image carries, from its tag."""
    name, tag = split_image(image)
    project = name.startswith(PROJECT_IMAGES)
    found = _TAG_VERSION.fullmatch(tag)
    if found and "vllm" in name.rsplit("/", 1)[-1]:
        version = full_version(found.group(1))
        return numbered(version, f"vLLM {version} (the tag of {image})")
    if project and tag.startswith("nightly"):
        return RunRelease(None, f"a nightly vLLM build ({image})",
                          f"a catalog of the vLLM inside {image} ({EXTRACTOR} run in that image)")
    if project and (not tag or tag.startswith("latest")):
        return numbered(default, f"vLLM {default}, the newest release servekit pins ({image})", pinned=False)
    return RunRelease(None, f"the vLLM build inside {image}, which no stored catalog describes",
                      f"a catalog of the vLLM inside {image} ({EXTRACTOR} run in that image)")


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag) of ``[registry[:port]/]name[:tag][@digest]``; the tag is '' when absent."""
    image = image.partition("@")[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1:]
    return image, ""


def omni_release(proc: Process) -> RunRelease | None:
    """A vLLM-Omni process (``vllm serve --omni``) runs vLLM-Omni's parser, a superset of vLLM's."""
    if not dict(proc.meta).get("omni_task"):
        return None
    return RunRelease(None, "vLLM-Omni (vllm serve --omni), whose options extend vLLM's",
                      "a flag catalog of vLLM-Omni's serve parser (no stored catalog describes it)")
