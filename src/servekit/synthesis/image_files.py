"""Whether a path a command names is there when the command runs in a container image.

A relative path is read from the image's working directory (``ImageFacts.workdir``). A path under
a bind mount of the ``docker run`` command is the host's (asked of the host's place); one under a
directory the image holds whole (vLLM's ``examples/``, ``ImageFacts.examples``) is there; anything
else cannot be told from outside the image. The facts are the image family's
(``servekit.synthesis.images``), each with the Dockerfile it was read from.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import field
from typing import Protocol

from servekit.records import record
from servekit.synthesis.images import ImageFacts, image_facts, in_image_path, under


class HostPlace(Protocol):
    """The host side of a bind mount (``servekit.engines.common.files.FilePlace``)."""

    @property
    def where(self) -> str: ...

    def has(self, path: str) -> bool | None: ...


@record
class ImagePlace:
    """Files as a command running in ``image`` sees them."""

    image: str
    host: HostPlace
    mounts: Mapping[str, str] = field(default_factory=dict)
    """Container path -> host path of each bind mount."""

    @property
    def facts(self) -> ImageFacts | None:
        return image_facts(self.image)

    @property
    def where(self) -> str:
        return f"inside {self.image}"

    def resolved(self, path: str) -> str:
        """The absolute path ``path`` names inside the image, as its ``docker run`` form writes it
        (``servekit.synthesis.images.in_image_path``: vLLM's examples where the image keeps them)."""
        facts = self.facts
        workdir = (facts.workdir if facts else None) or "/"
        return posixpath.normpath(posixpath.join(workdir, in_image_path(facts, path)))

    def has(self, path: str) -> bool | None:
        full = self.resolved(path)
        for inside, outside in self.mounts.items():
            if under(full, inside):
                return self.host.has(posixpath.join(outside, posixpath.relpath(full, inside)))
        facts = self.facts
        if facts is not None and facts.examples and under(full, facts.examples):
            return True
        return None

    def advice(self, path: str) -> str | None:
        """None: a path into vLLM's examples is already written where the image keeps them."""
        return None
