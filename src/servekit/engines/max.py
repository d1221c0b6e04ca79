"""Modular MAX dialect: ``max serve`` and ``max warm-cache`` launches from a vLLM launch.

``translate_to_max`` gives the serve argv, the warm-cache argv (same pipeline options, minus
the HTTP ones, plus ``--target`` when asked) and the list of vLLM options MAX cannot express.
``validate_max_argv`` checks a MAX argv against the stored MAX flag catalog and MAX's own rules.

Context options (``DialectContext.options``): ``target`` ("cuda:sm_90", "hip:gfx942", or
"auto" to derive it from the hardware), ``devices`` (explicit GPU ids, or "cpu"), ``precision``
(the variant's precision, used when the argv names no encoding), ``version`` of MAX.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from servekit.engines.base import Engine
from servekit.engines.base import EngineCommand as SplitCommand
from servekit.engines.dialect import (
    ERROR,
    NOTE,
    WARNING,
    DialectContext,
    EngineCommand,
    PrecompileStep,
    Untranslated,
    engine_image,
    finding,
    unique_findings,
)
from servekit.engines.findings import Finding
from servekit.engines.flags import FlagCatalog, load_catalog
from servekit.engines.max_translate import translate_options
from servekit.engines.max_vocab import SERVE_ONLY
from servekit.engines.vllm_launch import parse_vllm_argv
from servekit.errors import ServekitError

NAME = "max"
DEFAULT_VERSION = "26.7.0"
TARGET_APIS = ("cuda", "hip", "metal")
_TARGET = re.compile(r"^(cuda|hip|metal)(:[A-Za-z0-9_]+)?$")
_DEVICES = re.compile(r"^(cpu|gpu|gpu:all|gpu:\d+(,\d+)*)$")
# Compile targets per hardware generation, and per profile where one generation spans several.
_GENERATION_TARGETS = {"hopper": "cuda:sm_90", "ada": "cuda:sm_89", "ampere": "cuda:sm_80"}
_PROFILE_TARGETS = {  # per profile, without a trailing card count such as "_2x"
    "b200": "cuda:sm_100",
    "gb200": "cuda:sm_100",
    "b300": "cuda:sm_103",
    "gb300": "cuda:sm_103",
    "dgx_station_gb300": "cuda:sm_103",
    "rtx_5090": "cuda:sm_120",
    "rtx_pro_6000": "cuda:sm_120",
    "rtx_pro_5000": "cuda:sm_120",
    "dgx_spark_gb10": "cuda:sm_121",
    "mi300x": "hip:gfx942",
    "mi325x": "hip:gfx942",
    "mi355x": "hip:gfx950",
}
# Hardware generations MAX 26.7 has no backend for.
UNSUPPORTED_GENERATIONS = ("tpu", "xpu", "npu", "qaic")
IMAGE_REPOSITORIES = {
    "nvidia": "docker.modular.com/modular/max-nvidia-full",
    "amd": "docker.modular.com/modular/max-amd",
}
_NEEDS_DRAFT_MODEL = ("eagle", "dflash", "dflash2", "dspark")
_LORA_OPTIONS = ("--lora-paths", "--max-num-loras", "--max-lora-rank")


@dataclass(frozen=True)
class MaxTranslation:
    argv: tuple[str, ...]
    warm_cache_argv: tuple[str, ...]
    untranslated: tuple[Untranslated, ...]
    findings: tuple[Finding, ...]


def translate_to_max(vllm_argv: Sequence[str], context: DialectContext | None = None) -> MaxTranslation:
    context = context or DialectContext()
    build = translate_options(parse_vllm_argv(vllm_argv), context)
    findings = list(build.findings)
    pipeline = [(f, v) for f, v in build.options if f not in SERVE_ONLY]
    warm = ["max", "warm-cache", *_flatten(pipeline)]
    target, target_findings = resolve_target(context)
    findings += target_findings + hardware_findings(context)
    if target:
        warm += ["--target", target]
    argv = ("max", "serve", *_flatten(build.options))
    findings += validate_max_argv(argv, context)
    findings += validate_max_argv(warm, context)
    return MaxTranslation(argv, tuple(warm), tuple(build.untranslated), tuple(unique_findings(findings)))


def image_for(context: DialectContext) -> tuple[str | None, list[Finding]]:
    """The MAX container for the hardware's GPU brand (none for CPU or unknown hardware)."""
    brand = str((context.hardware or {}).get("brand", "")).lower()
    repository = IMAGE_REPOSITORIES.get(brand)
    if repository is None:
        if context.image and "modular/max" not in context.image:
            return None, [
                finding(
                    NOTE,
                    "max.image",
                    f"image {context.image} is not a MAX image; none is set",
                    fix="install MAX with pip (max[serve]) or pass a MAX image",
                )
            ]
        return context.image, []
    return engine_image(context, repository, prefix="max", tag=context.engine_version or DEFAULT_VERSION)


def hardware_findings(context: DialectContext) -> list[Finding]:
    generation = str((context.hardware or {}).get("generation", "")).lower()
    if generation in UNSUPPORTED_GENERATIONS:
        return [
            finding(
                ERROR,
                "max.hardware",
                f"MAX 26.7 has no backend for {context.hardware_id or generation} ({generation})",
                fix="serve on NVIDIA or AMD GPUs or a CPU, or use another engine",
            )
        ]
    return []


def resolve_target(context: DialectContext) -> tuple[str | None, list[Finding]]:
    """The warm-cache ``--target``: given, derived from the hardware (``"auto"``), or none."""
    target = context.options.get("target")
    if not target:
        return None, []
    if target == "auto":
        generation = str((context.hardware or {}).get("generation", "")).lower()
        if generation == "cpu" or generation in UNSUPPORTED_GENERATIONS:
            return None, []  # the host itself, or hardware_findings reports the gap
        base_id = re.sub(r"_\d+x$", "", context.hardware_id or "")
        derived = _PROFILE_TARGETS.get(base_id) or _GENERATION_TARGETS.get(generation)
        if derived is None:
            return None, [
                finding(
                    ERROR,
                    "max.target-unknown",
                    f"no MAX compile target known for hardware {context.hardware_id!r}",
                    option="--target",
                    fix="pass the target explicitly, e.g. cuda:sm_90 or hip:gfx942",
                )
            ]
        return derived, []
    if not _TARGET.match(str(target)):
        return None, [
            finding(
                ERROR,
                "max.target-format",
                f"--target {target!r} is not API[:ARCH]",
                option="--target",
                fix="use cuda, cuda:sm_90, hip:gfx942 or metal",
            )
        ]
    return str(target), []


def validate_max_argv(argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
    """Rules over a ``max serve`` / ``max warm-cache`` argv (program words optional)."""
    context = context or DialectContext()
    words = list(argv)
    command = "serve"
    if words[:1] == ["max"]:
        words = words[1:]
    if words[:1] and words[0] in ("serve", "warm-cache"):
        command = words.pop(0)
    options = _pairs(words)
    return _catalog_findings(words, command, context) + max_rule_findings(options, command)


def max_rule_findings(options: Sequence[tuple[str, str | None]], command: str = "serve") -> list[Finding]:
    """MAX's own rules beyond its parser: device lists, DP split, drafts, LoRA, memory, target."""
    findings: list[Finding] = []
    given = {flag: value for flag, value in options}
    devices = given.get("--devices")
    if devices is not None:
        devices = devices.lower()  # MAX lower-cases device specs before reading them
    if devices is not None and not _DEVICES.match(devices):
        findings.append(
            finding(
                ERROR,
                "max.devices-format",
                f"--devices {devices!r} is not cpu, gpu, gpu:all or gpu:ID,ID",
                option="--devices",
                fix="list GPU ids as gpu:0,1",
            )
        )
    dp = given.get("--data-parallel-degree")
    if devices and devices.startswith("gpu:") and devices != "gpu:all" and dp and dp.isdigit():
        count = len(devices[4:].split(","))
        if int(dp) < 1 or count % int(dp):
            findings.append(
                finding(
                    ERROR,
                    "max.dp-devices",
                    f"{count} devices do not split into {dp} data-parallel replicas",
                    option="--data-parallel-degree",
                    fix="use a device count that is a multiple of the degree",
                )
            )
    method = given.get("--speculative-method")
    if method in _NEEDS_DRAFT_MODEL and "--draft-model-path" not in given:
        findings.append(
            finding(
                WARNING,
                "max.draft-model",
                f"--speculative-method {method} needs a draft model",
                option="--draft-model-path",
                fix="pass --draft-model-path with the drafter repository",
            )
        )
    if any(o in given for o in _LORA_OPTIONS) and "--enable-lora" not in given:
        findings.append(
            finding(
                WARNING,
                "max.lora-disabled",
                "LoRA options are set but LoRA is not enabled",
                option="--enable-lora",
                fix="add --enable-lora",
            )
        )
    fraction = given.get("--device-memory-utilization")
    if fraction is not None and not _in_unit_interval(fraction):
        findings.append(
            finding(
                ERROR,
                "max.memory-fraction",
                f"--device-memory-utilization {fraction} is not in (0, 1]",
                option="--device-memory-utilization",
                fix="use a fraction such as 0.9",
            )
        )
    if command == "serve" and "--target" in given:
        findings.append(
            finding(
                ERROR,
                "max.target-serve",
                "--target is a warm-cache option",
                option="--target",
                fix="compile with max warm-cache --target, then serve on the hardware",
            )
        )
    return findings


def _catalog_findings(words: list[str], command: str, context: DialectContext) -> list[Finding]:
    from servekit.engines.lint import check_args

    version = context.engine_version or DEFAULT_VERSION
    try:
        catalog = load_catalog("max", version, command)
    except ServekitError as exc:
        return [finding(NOTE, "max.no-catalog", f"options not checked: {exc.message}", fix=exc.fix)]
    return check_args(catalog, words)


def _pairs(words: list[str]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(words):
        word = words[i]
        flag, eq, inline = word.partition("=")
        if eq:
            out.append((flag, inline))
            i += 1
        elif i + 1 < len(words) and not (words[i + 1].startswith("--")):
            out.append((word, words[i + 1]))
            i += 2
        else:
            out.append((word, None))
            i += 1
    return out


def _flatten(options: list[tuple[str, str | None]]) -> list[str]:
    out: list[str] = []
    for flag, value in options:
        out.append(flag)
        if value is not None:
            out.append(value)
    return out


def _in_unit_interval(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return 0 < value <= 1


class MaxEngine(Engine):
    """``--engine max``: lint against the stored MAX catalogs, translate from vLLM launches."""

    name = NAME
    catalog_engine = "max"
    default_version = DEFAULT_VERSION
    install_requirement = f"max=={DEFAULT_VERSION}"
    commands = ("serve", "warm-cache")

    def extra_findings(self, command: SplitCommand, catalog: FlagCatalog) -> list[Finding]:
        return max_rule_findings(_pairs(list(command.args)), command.command)

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineCommand:
        context = context or DialectContext()
        result = translate_to_max(vllm_argv, context)
        warm = PrecompileStep(
            name="warm-cache",
            description="download the weights into the Hugging Face cache and compile the model graphs",
            argv=result.warm_cache_argv,
        )
        env = {k: v for k, v in context.env.items() if not k.startswith("VLLM_")}
        image, image_findings = image_for(context)
        return EngineCommand(
            engine=NAME,
            argv=result.argv,
            env=env,
            image=image,
            precompile=(warm,),
            untranslated=result.untranslated,
            findings=(*result.findings, *image_findings),
        )

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        return validate_max_argv(argv, context)


ENGINE = MaxEngine()
DIALECT = ENGINE
