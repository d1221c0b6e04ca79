"""``--engine sglang``: ``python -m sglang.launch_server`` planned from a vLLM launch, linted
against SGLang's extracted catalog, rendered for its container image (lmsysorg/sglang)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from servekit.engines.common.artifacts import Artifact
from servekit.engines.common.command_line import EngineCommand, split_docker_run, strip_env
from servekit.engines.common.engine import Engine
from servekit.engines.common.findings import ERROR, NOTE, Finding, finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.lint import check_args
from servekit.engines.common.translation import DialectContext, EngineLaunch, engine_image, split_cuda_env
from servekit.engines.sglang.artifacts import sglang_artifacts
from servekit.engines.sglang.specs import (
    CATALOGS,
    DEFAULT_VERSION,
    ID,
    IMAGE_REPOSITORY,
    IMAGES,
    LAUNCH,
    MEMORY,
    MODULE,
    PRECOMPILE,
    ROUTER_MODULE,
    USER_INSTALL,
    image_tag,
)
from servekit.engines.sglang.translate import command, translate_to_sglang
from servekit.engines.sglang.upgrades import TABLE as UPGRADES
from servekit.hardware import profile_of

_PYTHON = re.compile(r"(^|/)python[0-9.]*$")
_MODEL = ("--model-path", "--model")


def _model_given(args: Sequence[str]) -> bool:
    return any(a in _MODEL or a.split("=", 1)[0] in _MODEL for a in args)


class SglangEngine(Engine):
    """SGLang: its own server module, launched from its image; nothing compiled ahead."""

    id = ID
    aliases: tuple[str, ...] = ()
    default_version = DEFAULT_VERSION
    commands = ("serve",)
    install = None  # its server needs CUDA packages; only its parser is built here (install_parser_envs.sh)
    user_install = USER_INSTALL
    images = IMAGES
    single_process = False
    precompile = PRECOMPILE
    launch = LAUNCH
    memory = MEMORY
    catalogs = CATALOGS
    upgrades = UPGRADES

    def recognizes(self, argv: Sequence[str]) -> bool:
        _, rest = strip_env(argv)
        docker = split_docker_run(rest)
        if docker is not None:
            return docker.image.split(":")[0].endswith(IMAGE_REPOSITORY) or self.recognizes(
                list(docker.command(LAUNCH.program, IMAGES)))
        return rest[:2] == ["sglang", "serve"] or (
            len(rest) >= 3 and bool(_PYTHON.search(rest[0])) and rest[1] == "-m" and rest[2] == MODULE)

    def flag_catalog(self, version: str | None = None, command: str = "serve") -> FlagCatalog:
        return CATALOGS.load(version or self.default_version, command)

    def split_command(self, argv: Sequence[str]) -> EngineCommand:
        env, rest = strip_env(argv)
        docker = split_docker_run(rest)
        if docker is not None:
            inner = self.split_command(list(docker.command(LAUNCH.program, IMAGES)))
            return EngineCommand("serve", inner.args, "docker", docker.env + inner.env, ("docker", "run", docker.image))
        if rest[:2] == ["sglang", "serve"]:
            return EngineCommand("serve", tuple(rest[2:]), "sglang", env, tuple(rest[:2]))
        if len(rest) >= 3 and _PYTHON.search(rest[0]) and rest[1] == "-m" and rest[2] == MODULE:
            return EngineCommand("serve", tuple(rest[3:]), "module", env, tuple(rest[:3]))
        return EngineCommand("serve", tuple(rest), "bare", env)

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        if _model_given(command.args) or any(a in ("-h", "--help") for a in command.args):
            return []
        return [finding(ERROR, "sglang.no-model", "SGLang needs a model: --model-path is required",
                        option="--model-path", fix="pass --model-path MODEL")]

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        context = context or DialectContext()
        version = context.engine_version or self.default_version
        build = translate_to_sglang(vllm_argv, self.flag_catalog(version))
        argv = command(build)
        env, dropped = _env(context.env)
        profile = profile_of(context.hardware, context.hardware_id) if context.hardware else None
        tag = image_tag(version, profile.platform, profile.compute_target) if profile else image_tag(version)
        image, image_findings = engine_image(context, IMAGE_REPOSITORY, prefix=ID, tag=tag)
        findings = [*build.findings, *image_findings, *self.validate(argv, context)]
        return EngineLaunch(engine=ID, argv=argv, env=env, image=image,
                            untranslated=(*build.untranslated, *dropped), findings=tuple(findings))

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        version = (context.engine_version if context else None) or self.default_version
        command = self.split_command(argv)
        catalog = self.flag_catalog(version)
        return check_args(catalog, command.args) + self.extra_findings(command, catalog)

    def artifacts(self, argv: Sequence[str]) -> list[Artifact]:
        return sglang_artifacts(self.split_command(argv).args)

    def plan_fields(self, launch: EngineLaunch) -> dict[str, Any]:
        """A prefill or decode server comes with the router that pairs them (``sglang_router_argv``)."""
        argv = list(launch.argv)
        if "--disaggregation-mode" not in argv:
            return {}
        mode = argv[argv.index("--disaggregation-mode") + 1]
        return {"sglang_disaggregation_mode": mode,
                "sglang_router_argv": ["python", "-m", ROUTER_MODULE, "--pd-disaggregation",
                                       "--prefill", "http://$PREFILL_HOST:$PREFILL_PORT",
                                       "--decode", "http://$DECODE_HOST:$DECODE_PORT"]}


def _env(env: Any) -> tuple[dict[str, str], list[Any]]:
    """The plan's env without vLLM's own variables (SGLang ignores them)."""
    from servekit.engines.common.translation import Untranslated

    kept = {k: v for k, v in env.items() if not k.startswith("VLLM_")}
    dropped = [Untranslated(k, v, "a vLLM setting; SGLang ignores it") for k, v in sorted(env.items())
               if k.startswith("VLLM_")]
    return kept, dropped


ENGINE = SglangEngine()
