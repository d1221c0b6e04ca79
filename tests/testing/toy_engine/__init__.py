"""A minimal engine package defined in the tests: ``toy run --model M --context N --port P``.

It implements the engine interface and nothing else in servekit knows it: the tests register
it through ``servekit.engines.registry.registered`` and drive plan, lint, translation and
warm-cache through the same calls every engine answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servekit.engines.common.artifacts import MODEL, Artifact, ArtifactError, make_artifact
from servekit.engines.common.command_line import EngineCommand, split_program_command
from servekit.engines.common.engine import Engine
from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import CatalogStore, FlagCatalog
from servekit.engines.common.specs import (
    BUDGET_UTILIZATION,
    NOTHING,
    LaunchSpec,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.translation import DialectContext, EngineLaunch, Untranslated, finding
from servekit.engines.vllm.launch import parse_vllm_argv

ID = "toy"
CATALOGS = CatalogStore(Path(__file__).resolve().parent / "data", ID, "tests/testing/toy_engine")
CARRIED = {"--max-model-len": "--context", "--port": "--port"}


class ToyEngine(Engine):
    id = ID
    aliases = ("toy-engine",)
    default_version = "1.0"
    commands = ("run",)
    install = None
    user_install = None
    single_process = True
    precompile = PrecompileSpec(kind=NOTHING, name="precompile", planned="nothing to compile",
                                missing_reason="toy compiles nothing")
    launch = LaunchSpec(program=("toy", "run"), readiness_path="/ready",
                        log_facts={"kv_cache_tokens": r"toy pool: (\d+) tokens"})
    memory = MemoryHooks(rule=MemoryRule(budget=BUDGET_UTILIZATION, counts_cuda_graphs=False,
                                         concurrency_in_tokens=True))

    def recognizes(self, argv: Sequence[str]) -> bool:
        return list(argv[:1]) == ["toy"]

    def flag_catalog(self, version: str | None = None, command: str = "run") -> FlagCatalog:
        return CATALOGS.load(version or self.default_version, command)

    def split_command(self, argv: Sequence[str]) -> EngineCommand:
        return split_program_command(argv, "toy", self.commands)

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        if "--model" not in command.args:
            return [finding("error", "toy.no-model", "toy needs --model", option="--model", fix="add --model M")]
        return []

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        context = context or DialectContext()
        launch = parse_vllm_argv(vllm_argv)
        argv = ["toy", "run", "--model", str(launch.model)]
        dropped = []
        for option in launch.options:
            if option.flag in CARRIED and option.value is not None:
                argv += [CARRIED[option.flag], option.value]
            else:
                dropped.append(Untranslated(option.flag, option.value, "toy has no such option"))
        return EngineLaunch(engine=ID, argv=tuple(argv), env=dict(context.env), untranslated=tuple(dropped))

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        return list(self.lint(argv).findings)

    def artifacts(self, argv: Sequence[str]) -> list[Artifact]:
        words = list(argv)
        if "--model" not in words or words.index("--model") + 1 >= len(words):
            raise ArtifactError("the toy command names no model", fix="pass --model")
        return [make_artifact(words[words.index("--model") + 1], MODEL, "--model", None)]

    def plan_fields(self, launch: EngineLaunch) -> dict[str, Any]:
        return {"toy_port": launch.argv[launch.argv.index("--port") + 1] if "--port" in launch.argv else None}


ENGINE = ToyEngine()
