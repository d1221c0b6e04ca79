"""The typed, frozen results of synthesis.

A ``Selection`` is what the user chose plus the defaults filled in; a ``Plan`` is the
engine-neutral deployment it turns into: the processes to start (each with its argv, env and
where every argument came from), the image, the install steps and the minimum version.
Catalog sub-documents that a surface shows verbatim (a strategy's router block, Mooncake's
config template) are carried as plain data in ``passthrough`` fields.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, NamedTuple

from servekit.hardware.container import ContainerDevices
from servekit.records import record


@record
class Selection:
    """One fully specified choice: every field is set, defaults already applied."""

    recipe_id: str
    hardware: str
    variant: str
    strategy: str
    node_count: int = 1
    features: tuple[str, ...] = ()
    modes: tuple[tuple[str, str], ...] = ()
    kv_offload: str | None = None
    pd_nodes: tuple[tuple[str, int], ...] | None = None
    engine: str = "vllm"
    notes: tuple[str, ...] = ()
    dropped_features: tuple[str, ...] = ()
    """Requested features left out because a later, mutually exclusive choice won."""
    omni_task: str | None = None
    """For vLLM-Omni recipes: which ``omni.tasks`` entry to serve (None = a plain serve plan)."""
    tp: int | None = None
    """``single_node_tp``'s tensor-parallel size when fit chose it; None: the recipe's rule."""
    layout_by_fit: bool = False
    """The strategy, node count and ``tp`` were chosen by servekit's fit check (the smallest
    layout that fits, ``servekit.app.layout``), not by the recipe's default rules."""

    @property
    def mode_map(self) -> dict[str, str]:
        return dict(self.modes)

    @property
    def pd_node_map(self) -> dict[str, int] | None:
        return None if self.pd_nodes is None else dict(self.pd_nodes)


class Arg(NamedTuple):
    """One unit of a command line: a flag with or without its value, or a positional.

    (A NamedTuple rather than a frozen dataclass: plans hold tens of thousands of these.)
    """

    flag: str | None
    value: Any = None
    source: str = ""

    def tokens(self) -> list[Any]:
        if self.flag is None:
            return [self.value]
        return [self.flag] if self.value is None else [self.flag, self.value]


class EnvVar(NamedTuple):
    """One environment variable and the catalog key that set it."""

    name: str
    value: Any
    source: str


@record
class Process:
    """One ``vllm serve`` to start: which role, which node rank, its args and env."""

    role: str
    model: str | None
    """The model the program serves; None for a process that names none (a Ray worker's ``ray start``)."""
    args: tuple[Arg, ...]
    env: tuple[EnvVar, ...]
    rank: int = 0
    port: int | None = None
    meta: tuple[tuple[str, Any], ...] = ()
    program: tuple[str, ...] = ("vllm", "serve")

    def command_words(self) -> list[Any]:
        """The program and the model it serves: the words before the flags."""
        return [*self.program] if self.model is None else [*self.program, self.model]

    def argv(self) -> list[Any]:
        out = self.command_words()
        for arg in self.args:
            out.extend(arg.tokens())
        return out

    def flags(self) -> list[Any]:
        """The argv after the program and the model."""
        return [token for arg in self.args for token in arg.tokens()]

    def env_map(self) -> dict[str, Any]:
        return {var.name: var.value for var in self.env}

    def provenance(self) -> list[dict[str, Any]]:
        return [{"arg": arg.tokens(), "source": arg.source} for arg in self.args]


@record
class Docker:
    """How a plan's processes run in containers on this hardware."""

    image: str | None
    devices: ContainerDevices
    """The hardware's container rules (devices, security, shared memory, host network)."""
    source: str
    several_nodes: bool = False
    """The plan's servers run on several machines: host network, no published ports."""
    source_mount: str | None = None
    """A source checkout on the host, mounted read-only at the same path and put first on
    ``PYTHONPATH`` (``model.docker_source.mount_path``)."""


@record
class InstallStep:
    """One step of a plan's install, as a shell command with where it comes from."""

    kind: str  # "prerequisite", "pip", "docker", "extra", "kv_store", "kv_offload"
    command: str
    note: str | None = None
    source: str = ""
    """The page or recipe key the step follows."""
    family: str | None = None
    """The platform install family (``servekit.synthesis.install_families``) that wrote it."""
    forms: tuple[str, ...] = ()
    """The install forms the step belongs to: ``pip`` (on the machine itself) and/or ``docker``;
    () takes them from its kind (``KIND_FORMS``). A recipe dependency states its own
    (``install_modes``, absent meaning pip only, as on the recipes site)."""
    optional: bool = False
    """The recipe marks the step optional: shown with its form, never run by a script."""

    def install_forms(self) -> tuple[str, ...]:
        return self.forms or KIND_FORMS.get(self.kind, (PIP_FORM,))

    def runs_in(self, docker: bool) -> bool:
        """A script of the docker form (``docker``) or of the form on the machine itself runs it."""
        return not self.optional and (DOCKER_FORM if docker else PIP_FORM) in self.install_forms()


PIP_FORM, DOCKER_FORM = "pip", "docker"
KIND_FORMS: dict[str, tuple[str, ...]] = {
    "prerequisite": (PIP_FORM, DOCKER_FORM),  # drivers and runtimes on the host serve both forms
    "docker": (DOCKER_FORM,),
    "kv_offload": (PIP_FORM, DOCKER_FORM),
}
"""The forms a step of each kind belongs to; any other kind (pip, extra, kv_store) is the pip form's."""


@record
class Plan:
    """Selection -> everything needed to start, check and explain a deployment."""

    selection: Selection
    deploy_type: str
    model_id: str
    processes: tuple[Process, ...]
    docker: Docker
    env: tuple[EnvVar, ...] = ()
    install: tuple[InstallStep, ...] = ()
    min_version: str | None = None
    min_version_sources: tuple[str, ...] = ()
    router: tuple[tuple[str, Any], ...] | None = None
    passthrough: tuple[tuple[str, Any], ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def role(self, name: str) -> list[Process]:
        return [p for p in self.processes if p.role == name]

    def env_map(self) -> dict[str, Any]:
        return {var.name: var.value for var in self.env}

    def extra(self, key: str, default: Any = None) -> Any:
        return dict(self.passthrough).get(key, default)
