"""``--engine vllm-ascend``: vLLM's catalog plus ModelSlim quantization, and the Ascend rules."""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.ascend.specs import ALIASES, ID, MEMORY, PRECOMPILE, USER_INSTALL
from servekit.engines.ascend.translate import speculative_findings, translate_ascend, validate_ascend
from servekit.engines.common.command_line import EngineCommand
from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.translation import DialectContext, EngineLaunch, extend_catalog
from servekit.engines.vllm import VllmEngine
from servekit.engines.vllm.launch import parse_vllm_argv


class AscendEngine(VllmEngine):
    """vLLM with the Ascend plugin: the same command line, the NPU image, env and rules."""

    id = ID
    aliases = ALIASES
    install = None  # needs CANN and NPUs; not installable here
    user_install = USER_INSTALL
    single_process = False
    vllm_platforms = ("ascend",)  # vLLM on Ascend is the vllm-ascend plugin
    precompile = PRECOMPILE
    memory = MEMORY

    def recognizes(self, argv: Sequence[str]) -> bool:
        return False  # its command lines are vLLM's: choose it by name

    def adjust_catalog(self, catalog: FlagCatalog) -> FlagCatalog:
        return extend_catalog(catalog, registries={"quantization_methods": ("ascend",)})

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        launch = parse_vllm_argv(list(command.args))
        return super().extra_findings(command, catalog) + speculative_findings(launch)

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        return translate_ascend(vllm_argv, context)

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        return validate_ascend(argv, context)


ENGINE = AscendEngine()
