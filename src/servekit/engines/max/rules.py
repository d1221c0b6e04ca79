"""MAX's own rules over a ``max serve`` / ``max warm-cache`` argv, beyond its parser."""

from __future__ import annotations

import re
from collections.abc import Sequence

from servekit.engines.common.findings import ERROR, NOTE, WARNING, Finding, finding
from servekit.engines.common.lint import check_args
from servekit.engines.common.translation import DialectContext
from servekit.engines.max.checks import combined
from servekit.engines.max.specs import CATALOGS, DEFAULT_VERSION
from servekit.errors import ServekitError

_DEVICES = re.compile(r"^(cpu|gpu|gpu:all|gpu:\d+(,\d+)*)$")
_GPU_IDS = re.compile(r"^\d+(,\d+)*$")
# Sub-commands that load a model: MAX stops with "No model specified" without --model/--model-path.
MODEL_COMMANDS = ("serve", "generate", "encode", "warm-cache")
_MODEL_OPTIONS = ("--model", "--model-path")
_NEEDS_DRAFT_MODEL = ("eagle", "dflash", "dflash2", "dspark")
_LORA_OPTIONS = ("--lora-paths", "--max-num-loras", "--max-lora-rank")


def validate_max_argv(argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
    """Rules over a ``max serve`` / ``max warm-cache`` argv (program words optional)."""
    context = context or DialectContext()
    words = list(argv)
    command = "serve"
    if words[:1] == ["max"]:
        words = words[1:]
    if words[:1] and words[0] in ("serve", "warm-cache"):
        command = words.pop(0)
    rules = max_rule_findings(option_pairs(words), command)
    version = context.engine_version or DEFAULT_VERSION
    return combined(_catalog_findings(words, command, context), rules, version)


def model_findings(given: dict[str, str | None], command: str) -> list[Finding]:
    """A model-loading sub-command with no model: MAX parses it, then stops with "No model specified"."""
    if command not in MODEL_COMMANDS or any(o in given for o in (*_MODEL_OPTIONS, "--config-file")):
        return []
    return [
        finding(
            ERROR,
            "max.no-model",
            f"No model specified: max {command} needs --model (or --model-path)"
            + ("" if command == "serve" else "; without one MAX stops on an empty Hugging Face repo id"),
            option="--model",
            fix=f"pass --model with a Hugging Face repo ID or local path, e.g. max {command} --model Qwen/Qwen3-8B",
        )
    ]


def devices_findings(devices: str | None) -> list[Finding]:
    if devices is None:
        return []
    devices = devices.lower()  # MAX lower-cases device specs before reading them
    if _DEVICES.match(devices):
        return []
    fix = (
        f"write --devices gpu:{devices}: GPU ids follow gpu:, and several ids shard the model over those GPUs"
        if _GPU_IDS.match(devices)
        else "list GPU ids as gpu:0,1"
    )
    message = f"--devices {devices!r} is not cpu, gpu, gpu:all or gpu:ID,ID"
    return [finding(ERROR, "max.devices-format", message, option="--devices", fix=fix)]


def max_rule_findings(options: Sequence[tuple[str, str | None]], command: str = "serve") -> list[Finding]:
    """MAX's own rules beyond its parser: model, device lists, DP split, drafts, LoRA, memory, target."""
    given = {flag: value for flag, value in options}
    findings = model_findings(given, command) + devices_findings(given.get("--devices"))
    devices = (given.get("--devices") or "").lower() or None
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
    version = context.engine_version or DEFAULT_VERSION
    try:
        catalog = CATALOGS.load(version, command)
    except ServekitError as exc:
        return [finding(NOTE, "max.no-catalog", f"options not checked: {exc.message}", fix=exc.fix)]
    return check_args(catalog, words)


def option_pairs(words: list[str]) -> list[tuple[str, str | None]]:
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


def _in_unit_interval(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return 0 < value <= 1
