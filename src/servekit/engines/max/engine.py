"""``--engine max``: lint against the stored MAX catalogs, translate from vLLM launches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servekit.engines.common.artifacts import Artifact
from servekit.engines.common.command_line import EngineCommand, split_program_command, strip_env
from servekit.engines.common.engine import Engine
from servekit.engines.common.files import HERE, FilePlace, file_findings
from servekit.engines.common.findings import Finding, LintResult
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.lint import check_args
from servekit.engines.common.translation import DialectContext, EngineLaunch, PrecompileStep
from servekit.engines.max.artifacts import max_artifacts
from servekit.engines.max.checks import combined
from servekit.engines.max.rules import max_rule_findings, option_pairs, validate_max_argv
from servekit.engines.max.specs import (
    ALIASES,
    CATALOGS,
    DEFAULT_VERSION,
    ID,
    INSTALL,
    LAUNCH,
    MEMORY,
    PRECOMPILE,
    PROGRAM,
    USER_INSTALL,
)
from servekit.engines.max.targets import IMAGES, image_for
from servekit.engines.max.translate import translate_to_max

WARM_CACHE = "warm-cache"
# Every sub-command of ``max._entrypoints.pipelines.main``, each with its stored catalog; serve first.
COMMANDS = ("serve", "generate", "encode", WARM_CACHE, "warm-interpreter-cache", "list", "benchmark")
# What click reports about words a command that passes unknown options through (benchmark) keeps.
_PASSED_THROUGH = ("unknown-option", "unexpected-argument")


class MaxEngine(Engine):
    """Modular MAX: its own command line (``max serve``), compiled ahead with ``max warm-cache``."""

    id = ID
    aliases = ALIASES
    default_version = DEFAULT_VERSION
    commands = COMMANDS
    install = INSTALL
    user_install = USER_INSTALL
    images = IMAGES
    single_process = True
    precompile = PRECOMPILE
    launch = LAUNCH
    memory = MEMORY
    catalogs = CATALOGS

    def recognizes(self, argv: Sequence[str]) -> bool:
        words = [w for w in argv if "=" not in w or w.startswith("-")]
        return words[:1] == [PROGRAM]

    def flag_catalog(self, version: str | None = None, command: str = "serve") -> FlagCatalog:
        return CATALOGS.load(version or self.default_version, command)

    def split_command(self, argv: Sequence[str]) -> EngineCommand:
        return split_program_command(argv, PROGRAM, self.commands)

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        return max_rule_findings(option_pairs(list(command.args)), command.command)

    def lint(self, argv: Sequence[str], version: str | None = None, files: FilePlace = HERE) -> LintResult:
        """The catalog's checks and MAX's rules, an old spelling named by its current one, each problem once."""
        command = self.split_command(argv)
        catalog = self.flag_catalog(version, command.command)
        found = check_args(catalog, command.args)
        if catalog.source.get("ignore_unknown_options"):
            found = [f for f in found if f.code not in _PASSED_THROUGH]
        findings = combined(found, self.extra_findings(command, catalog), catalog.version, parser_first=True)
        findings += file_findings(self.named_files(command, catalog), files)
        return self.result(argv, catalog, findings)

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        context = context or DialectContext()
        result = translate_to_max(vllm_argv, context)
        warm = PrecompileStep(
            name=WARM_CACHE,
            description="download the weights into the Hugging Face cache and compile the model graphs",
            argv=result.warm_cache_argv,
        )
        env = {k: v for k, v in context.env.items() if not k.startswith("VLLM_")}
        image, image_findings = image_for(context)
        return EngineLaunch(
            engine=ID,
            argv=result.argv,
            env=env,
            image=image,
            precompile=(warm,),
            untranslated=result.untranslated,
            findings=(*result.findings, *image_findings),
        )

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        return validate_max_argv(argv, context)

    def artifacts(self, argv: Sequence[str]) -> list[Artifact]:
        _, rest = strip_env(argv)
        return max_artifacts(rest)

    def plan_fields(self, launch: EngineLaunch) -> dict[str, Any]:
        """The plan carries the warm-cache argv as ``warm_cache_argv``."""
        warm = [step.argv for step in launch.precompile if step.name == WARM_CACHE]
        if warm or launch.precompile:
            return {"warm_cache_argv": list(warm[0] if warm else launch.precompile[0].argv)}
        return {}


ENGINE = MaxEngine()
