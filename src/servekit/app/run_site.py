"""Where and how a plan's commands run: its container form or its native install, on this
machine (``up``) or on another one (a plan). The checks ask it which release runs (for the flag
catalog) and where the files a command names must be.
"""

from __future__ import annotations

from typing import Any

from servekit.app.run_release import RunRelease, image_release, native_release, omni_release
from servekit.engines.common.command_line import split_docker_run
from servekit.engines.common.files import ELSEWHERE, HERE, FilePlace
from servekit.engines.common.flags import version_key
from servekit.records import record
from servekit.synthesis.docker import docker_argv
from servekit.synthesis.image_files import ImagePlace
from servekit.synthesis.plan import Plan, Process


@record
class RunSite:
    """``container``: the plan runs in its image (else from its native install); ``docker``: as
    its ``docker run`` form (else as Kubernetes pods, which bring their own network and devices);
    ``here``: this machine runs it (``up``), so its files can be looked at."""

    container: bool = False
    here: bool = False
    docker: bool = True

    @property
    def runs_docker(self) -> bool:
        return self.container and self.docker

    @property
    def host(self) -> FilePlace:
        return HERE if self.here else ELSEWHERE

    def in_container(self, plan: Plan) -> bool:
        return self.container and plan.docker.image is not None

    def files(self, plan: Plan, proc: Process) -> FilePlace:
        """Where ``proc``'s files must be: in its image (with its bind mounts), or on its host."""
        if not self.in_container(plan):
            return self.host
        run = split_docker_run(container_argv(plan, proc))
        return ImagePlace(str(plan.docker.image), self.host, run.bind_mounts() if run else {})

    def release(self, plan: Plan, proc: Process, *, nightly: bool, default: str,
                pinned: str | None = None) -> RunRelease:
        """The release ``proc`` runs in this form (``pinned``: the release the plan or its engine names)."""
        omni = omni_release(proc)
        if omni is not None:
            return omni
        return self.vllm_release(plan, nightly=nightly, default=default, pinned=pinned)

    def vllm_release(self, plan: Plan, *, nightly: bool, default: str, pinned: str | None = None) -> RunRelease:
        """The vLLM release this form installs or its image carries (under vLLM-Omni too)."""
        if self.in_container(plan):
            return image_release(str(plan.docker.image), default=default)
        return native_release(plan, nightly=nightly, default=default, pinned=pinned)


def container_argv(plan: Plan, proc: Process) -> list[str]:
    """The ``docker run`` argv of one process, as the docker form renders it."""
    env: dict[str, Any] = {**plan.env_map(), **proc.env_map()}
    return [str(w) for w in docker_argv(plan.docker, proc.argv(), env, proc.port or 8000)]


def engine_release(version: str | None) -> str | None:
    """A release an engine pins for its install (``UserInstall.default_version``), when it is one."""
    return version if version and version_key(version)[0] else None
