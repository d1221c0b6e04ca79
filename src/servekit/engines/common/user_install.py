"""How a person installs an engine on the machine that serves, as shell steps they can paste.

Not the local environment servekit builds for lint and warm-cache (``InstallRecipe``): these are
the steps a plan shows, per form (``pip`` into a virtual environment, ``docker`` image), with
``{version}`` filled in from ``plan --vllm-version`` or the engine's pinned version.
"""

from __future__ import annotations

from servekit.records import record


@record
class UserInstallStep:
    kind: str  # "pip", "docker" or "prerequisite"
    command: str
    note: str | None = None
    source: str = ""
    """The page the step follows."""


@record
class UserInstall:
    """An engine's install steps for people; ``default_version`` fills ``{version}`` when none is given.

    ``by_family`` replaces ``steps`` on a platform install family
    (``servekit.synthesis.install_families``: ``rocm``, ``cpu-x86_64`` ...) whose steps differ."""

    default_version: str
    steps: tuple[UserInstallStep, ...]
    by_family: tuple[tuple[str, tuple[UserInstallStep, ...]], ...] = ()

    def for_version(self, version: str | None = None, family: str | None = None) -> tuple[UserInstallStep, ...]:
        chosen = (version or self.default_version).removeprefix("v")
        steps = dict(self.by_family).get(family or "", self.steps)
        return tuple(UserInstallStep(s.kind, s.command.replace("{version}", chosen),
                                     None if s.note is None else s.note.replace("{version}", chosen), s.source)
                     for s in steps)
