"""The one interface every engine implements, fully: an engine package exposes one instance.

An engine is named by ``id`` (plus ``aliases``) and answers every question servekit asks about
it: how to install it locally, whether a command line is its own, its flag catalog and lint,
how a vLLM launch reads in its form, what it loads (for warm-cache), its pre-compile step, how
it is launched and watched, and the memory model fit applies. ``servekit.engines.registry``
holds the instances; nothing outside an engine package and the registry names an engine.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from servekit.engines.common.command_line import EngineCommand
from servekit.engines.common.files import HERE, FilePlace, NamedFile, file_findings, plugin_files
from servekit.engines.common.findings import Finding, LintResult
from servekit.engines.common.flags import CatalogStore, FlagCatalog
from servekit.engines.common.install import InstallRecipe
from servekit.engines.common.lint import check_args
from servekit.engines.common.scan import scan
from servekit.engines.common.specs import LaunchSpec, MemoryHooks, PrecompileSpec
from servekit.synthesis.images import ImageFacts

if TYPE_CHECKING:  # what translation, warm-cache and the upgrade check use: a plan does not import them
    from servekit.engines.common.artifacts import Artifact
    from servekit.engines.common.translation import DialectContext, EngineLaunch
    from servekit.engines.common.upgrade_table import UpgradeTable
    from servekit.engines.common.user_install import UserInstall


class Engine(ABC):
    """A serving engine. Subclasses set every attribute below and implement every method."""

    id: str
    aliases: tuple[str, ...]
    default_version: str  # the pinned flag catalog version
    commands: tuple[str, ...]  # sub-commands with a stored catalog; the first is the default
    install: InstallRecipe | None  # local environment; None when it cannot be installed here
    user_install: UserInstall | None  # the steps a plan shows people; None: the plan's own install steps
    single_process: bool  # serves from one process: multi-process plans have no form in it
    vllm_platforms: tuple[str, ...] = ()  # hardware platforms where a plain vLLM launch runs as this engine
    images: tuple[ImageFacts, ...] = ()  # facts of the engine's own images (entrypoint, platforms, source)
    precompile: PrecompileSpec
    launch: LaunchSpec
    memory: MemoryHooks
    catalogs: CatalogStore | None = None  # where its releases' flag catalogs are stored (upgrade checks)

    @property
    def upgrades(self) -> UpgradeTable:
        """Changes between releases the catalogs cannot show (none unless the engine names its table;
        only the upgrade check asks, so an engine's table is imported when it does)."""
        from servekit.engines.common.upgrade_table import UpgradeTable

        return UpgradeTable()

    @abstractmethod
    def recognizes(self, argv: Sequence[str]) -> bool:
        """The command line is written for this engine (its program words)."""

    @abstractmethod
    def flag_catalog(self, version: str | None = None, command: str = "serve") -> FlagCatalog:
        """The options the engine's ``command`` accepts at ``version`` (default: pinned)."""

    @abstractmethod
    def split_command(self, argv: Sequence[str]) -> EngineCommand:
        """The sub-command whose catalog applies and the options its parser sees."""

    @abstractmethod
    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        """Rules only this engine has, beyond its parser."""

    @abstractmethod
    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        """A vLLM launch in this engine's form, with what did not carry over and findings."""

    @abstractmethod
    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        """Every rule of this engine over one of its own launches, given the hardware."""

    @abstractmethod
    def artifacts(self, argv: Sequence[str]) -> list[Artifact]:
        """The repos one of this engine's command lines loads, in order."""

    @abstractmethod
    def plan_fields(self, launch: EngineLaunch) -> dict[str, Any]:
        """Keys this engine adds to a plan's rendering object (e.g. its warm-up argv)."""

    def other_release_spelling(self, catalog: FlagCatalog, option: str) -> tuple[str, str] | None:
        """(``catalog``'s spelling, the release that writes ``option``) when another stored release of
        this engine names one of ``catalog``'s flags ``option``; None by default."""
        return None

    def named_files(self, command: EngineCommand, catalog: FlagCatalog) -> list[NamedFile]:
        """The files the command names and needs at startup (by default: parser plugin files)."""
        return plugin_files(catalog, scan(catalog, list(command.args)).occurrences, self.id)

    def lint(self, argv: Sequence[str], version: str | None = None, files: FilePlace = HERE) -> LintResult:
        """The catalog's checks, the engine's own rules, and the files the command names, looked
        for at ``files`` (where the command runs: this machine unless told otherwise)."""
        command = self.split_command(argv)
        catalog = self.flag_catalog(version, command.command)
        findings = check_args(catalog, command.args, lambda option: self.other_release_spelling(catalog, option))
        findings += self.extra_findings(command, catalog)
        findings += file_findings(self.named_files(command, catalog), files)
        return self.result(argv, catalog, findings)

    def result(self, argv: Sequence[str], catalog: FlagCatalog, findings: Sequence[Finding]) -> LintResult:
        """The lint result, each finding carrying the release it was checked against (``vllm 0.32.0``)."""
        release = f"{catalog.engine} {catalog.version}"
        stamped = tuple(f if f.release else replace(f, release=release) for f in findings)
        return LintResult(self.id, catalog.version, tuple(argv), stamped)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.id, *self.aliases)
