"""``--engine vllm-qaic``: vLLM's catalog plus the QAIC formats, and the QAIC rules."""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.command_line import EngineCommand
from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.translation import DialectContext, EngineLaunch, extend_catalog
from servekit.engines.qaic.specs import ALIASES, ID, MEMORY, PRECOMPILE, USER_INSTALL
from servekit.engines.qaic.translate import translate_qaic, validate_qaic
from servekit.engines.vllm import VllmEngine


class QaicEngine(VllmEngine):
    """vLLM with the Cloud AI 100 plugin: the same command line, QAIC formats and compile step."""

    id = ID
    aliases = ALIASES
    install = None  # needs the Cloud AI SDK; not installable here
    user_install = USER_INSTALL
    single_process = True
    vllm_platforms = ("qaic",)  # vLLM on Cloud AI 100 is the QAIC fork
    precompile = PRECOMPILE
    memory = MEMORY

    def recognizes(self, argv: Sequence[str]) -> bool:
        return False  # its command lines are vLLM's: choose it by name

    def adjust_catalog(self, catalog: FlagCatalog) -> FlagCatalog:
        return extend_catalog(
            catalog, registries={"quantization_methods": ("mxfp6",)}, choices={"--kv-cache-dtype": ("mxint8",)}
        )

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        return super().extra_findings(command, catalog) + validate_qaic(list(command.args))

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        return translate_qaic(vllm_argv, context)

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        return validate_qaic(argv, context)


ENGINE = QaicEngine()
