"""What a container image carries on its file system, per image family, and whether a path a
command names is there when the command runs in that image.

A relative path is read from the image's working directory. A path under a bind mount of the
``docker run`` command is the host's (asked of the host's place); one under a directory the image
holds whole (vLLM's ``examples/``) is there; anything else cannot be told from outside the image.
Each family's facts come from the Dockerfile that builds it (``source``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from servekit.synthesis.images import repository_of

VLLM_DOCKERFILE = "https://github.com/vllm-project/vllm/blob/main/docker/"


@dataclass(frozen=True)
class ImageFiles:
    """One image family's working directory and the directories it holds whole."""

    family: str
    repositories: tuple[str, ...]
    """Image names (registry and repository, no tag) of the family."""
    workdir: str
    examples: str | None
    """Where vLLM's ``examples/`` directory is in the image (None: not carried)."""
    source: str


FAMILIES: tuple[ImageFiles, ...] = (
    ImageFiles("vllm-cuda", ("vllm/vllm-openai",), "/vllm-workspace", "/vllm-workspace/examples",
               VLLM_DOCKERFILE + "Dockerfile (stage vllm-base: WORKDIR /vllm-workspace, COPY examples examples; "
               "vllm-openai builds on it)"),
    ImageFiles("vllm-rocm", ("vllm/vllm-openai-rocm",), "/app", "/app/vllm/examples",
               VLLM_DOCKERFILE + "Dockerfile.rocm (ARG COMMON_WORKDIR=/app, WORKDIR ${COMMON_WORKDIR}; stage final: "
               "COPY --from=export_vllm /examples ${COMMON_WORKDIR}/vllm/examples; vllm-openai builds on it)"),
)


def image_files(image: str | None) -> ImageFiles | None:
    """The family facts of ``image`` (any tag), or None for an image servekit has none for."""
    if not image:
        return None
    repository = repository_of(image)
    return next((f for f in FAMILIES if repository in f.repositories), None)


class HostPlace(Protocol):
    """The host side of a bind mount (``servekit.engines.common.files.FilePlace``)."""

    @property
    def where(self) -> str: ...

    def has(self, path: str) -> bool | None: ...


@dataclass(frozen=True)
class ImagePlace:
    """Files as a command running in ``image`` sees them."""

    image: str
    host: HostPlace
    mounts: Mapping[str, str] = field(default_factory=dict)
    """Container path -> host path of each bind mount."""

    @property
    def facts(self) -> ImageFiles | None:
        return image_files(self.image)

    @property
    def where(self) -> str:
        return f"inside {self.image}"

    def resolved(self, path: str) -> str:
        workdir = self.facts.workdir if self.facts else "/"
        return posixpath.normpath(posixpath.join(workdir, path))

    def has(self, path: str) -> bool | None:
        full = self.resolved(path)
        for inside, outside in self.mounts.items():
            if _under(full, inside):
                return self.host.has(posixpath.join(outside, posixpath.relpath(full, inside)))
        facts = self.facts
        if facts is not None and facts.examples and _under(full, facts.examples):
            return True
        return None

    def advice(self, path: str) -> str | None:
        """Where the image keeps vLLM's examples, when the path looks for them elsewhere."""
        facts = self.facts
        if facts is None or not facts.examples or not path.startswith("examples/"):
            return None
        if _under(self.resolved(path), facts.examples):
            return None
        rest = path.removeprefix("examples/")
        return (f"{self.image} keeps vLLM's examples at {facts.examples} (its working directory is "
                f"{facts.workdir}): write {facts.examples}/{rest}")


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
