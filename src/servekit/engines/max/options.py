"""vLLM launch options -> Modular MAX pipeline options, one rule per vLLM option.

Every vLLM option ends up in exactly one place: a MAX option, or the untranslated list with the
reason it has no MAX equivalent. Rules hold facts about MAX 26.7 (``max serve --help``):
device lists (``--devices gpu:0,1``), weight encodings, KV cache formats, speculative methods.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from servekit.engines.common.findings import ERROR, NOTE, WARNING, Finding, finding
from servekit.engines.common.translation import DialectContext, Untranslated
from servekit.engines.max.specs import CATALOGS
from servekit.engines.max.vocab import (
    DTYPE_ENCODINGS,
    KV_CACHE_FORMATS,
    MAX_REASONING_PARSERS,
    MAX_TOOL_PARSERS,
    NO_EQUIVALENT,
    PRECISION_ENCODINGS,
    QUANTIZATION_ENCODINGS,
    REASONING_PARSER_NAMES,
    RENAMED,
    SPECULATIVE_METHODS,
    SWITCHES,
    TOOL_PARSER_NAMES,
)
from servekit.engines.vllm.launch import Option, VllmLaunch, parse_token_count
from servekit.errors import ServekitError
from servekit.hardware import profile_of


@dataclass
class MaxBuild:
    """What the rules produce: MAX options in order, plus what did not carry over."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    untranslated: list[Untranslated] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def add(self, flag: str, value: str | None = None) -> None:
        self.options.append((flag, value))

    def skip(self, opt: Option | str, reason: str, value: str | None = None) -> None:
        if isinstance(opt, Option):
            self.untranslated.append(Untranslated(opt.flag, opt.value, reason))
        else:
            self.untranslated.append(Untranslated(opt, value, reason))

    def has(self, flag: str) -> bool:
        return any(f == flag for f, _ in self.options)


Rule = Callable[[Option, VllmLaunch, DialectContext, MaxBuild], None]


def translate_options(launch: VllmLaunch, context: DialectContext) -> MaxBuild:
    build = MaxBuild()
    if launch.model is None:
        build.findings.append(
            finding(ERROR, "max.no-model", "the vLLM command names no model", fix="give the model after 'vllm serve'")
        )
    else:
        build.add("--model-path", launch.model)
    devices_at = len(build.options)
    for opt in launch.options:
        rule = RULES.get(opt.flag)
        if rule is not None:
            rule(opt, launch, context, build)
        elif opt.flag in RENAMED:
            build.add(RENAMED[opt.flag], opt.value)
        elif opt.flag in SWITCHES or (opt.flag.startswith("--no-") and "--" + opt.flag[5:] in SWITCHES):
            build.add(opt.flag)
        elif opt.flag in NO_EQUIVALENT:
            build.skip(opt, NO_EQUIVALENT[opt.flag])
        else:
            build.skip(opt, "MAX 26.7 has no equivalent option")
    build.options[devices_at:devices_at] = device_options(launch, context, build)
    if not build.has("--quantization-encoding"):
        encoding = PRECISION_ENCODINGS.get(str(context.options.get("precision", "")).lower())
        if encoding:
            build.add("--quantization-encoding", encoding)
    build.findings += architecture_findings(context)
    for name, value in sorted(context.env.items()):
        if name.startswith("VLLM_"):
            build.skip(name, "vLLM environment variable; MAX does not read it", value)
    return build


def architecture_findings(context: DialectContext) -> list[Finding]:
    """The model's architecture (``options["architecture"]``, from config.json) must exist in MAX."""
    architecture = context.options.get("architecture")
    if not architecture:
        return []
    try:
        known = CATALOGS.load(context.engine_version or None).registries.get("architectures", ())
    except ServekitError:
        return []
    if known and architecture not in known:
        return [
            finding(
                ERROR,
                "max.architecture",
                f"MAX has no implementation of {architecture}",
                fix="serve this model with vLLM, or pick a model whose architecture `max list` shows",
            )
        ]
    return []


def device_options(launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> list[tuple[str, str | None]]:
    """``--devices`` from TP x DP (or the explicit ``devices`` option), ``--data-parallel-degree``."""
    tp = launch.get_int("--tensor-parallel-size", 1) or 1
    dp = launch.get_int("--data-parallel-size", 1) or 1
    profile = profile_of(context.hardware, context.hardware_id) if context.hardware else None
    explicit = context.options.get("devices")
    if (profile is not None and profile.kind == "cpu") or explicit == "cpu":
        out: list[tuple[str, str | None]] = [("--devices", "cpu")]
        if tp * dp > 1:
            build.findings.append(
                finding(
                    WARNING,
                    "max.cpu-parallel",
                    f"TP x DP = {tp * dp} has no meaning on CPU; MAX runs one CPU device",
                    option="--tensor-parallel-size",
                    fix="drop --tensor-parallel-size / --data-parallel-size",
                )
            )
        return out
    ids = list(explicit) if isinstance(explicit, (list, tuple)) else list(range(tp * dp))
    if len(ids) != tp * dp:
        build.findings.append(
            finding(
                ERROR,
                "max.device-count",
                f"{len(ids)} devices given but TP {tp} x DP {dp} needs {tp * dp}",
                option="--devices",
                fix=f"list exactly {tp * dp} device ids",
            )
        )
    per_node = profile.device_count if profile is not None else None
    if per_node is not None and tp * dp > per_node:
        build.findings.append(
            finding(
                ERROR,
                "max.too-many-devices",
                f"TP {tp} x DP {dp} = {tp * dp} devices but the node has {per_node}",
                option="--tensor-parallel-size",
                fix="lower the parallel sizes; MAX serves from one node",
            )
        )
    out = [("--devices", "gpu:" + ",".join(str(i) for i in ids))]
    if dp > 1:
        out.append(("--data-parallel-degree", str(dp)))
    return out


def _parallel(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    """Folded into ``--devices`` / ``--data-parallel-degree`` by :func:`device_options`."""


def _pipeline(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    size = launch.get_int("--pipeline-parallel-size", 1) or 1
    build.skip(opt, "MAX has no pipeline parallelism")
    if size > 1:
        build.findings.append(
            finding(
                ERROR,
                "max.pipeline-parallel",
                f"pipeline parallel size {size} cannot be expressed in MAX",
                option="--pipeline-parallel-size",
                fix="use tensor parallelism over the node's devices instead",
            )
        )


def _expert_parallel(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    if launch.switch("--enable-expert-parallel"):
        tp = launch.get_int("--tensor-parallel-size", 1) or 1
        dp = launch.get_int("--data-parallel-size", 1) or 1
        build.add("--ep-size", str(tp * dp))


def _max_model_len(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    if (opt.value or "").lower() in ("auto", "-1"):
        build.skip(opt, "MAX defaults to the model's max_position_embeddings, clamped to fit memory")
    else:
        build.add("--max-length", str(parse_token_count(opt.value or "")))


def _quantization(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    method = (opt.value or "").lower()
    encoding = QUANTIZATION_ENCODINGS.get(method)
    if encoding:
        build.add("--quantization-encoding", encoding)
    elif method == "gguf":
        build.skip(opt, "MAX detects the GGUF encoding from the repository")
    else:
        build.skip(opt, f"MAX 26.7 has no weight encoding for vLLM quantization '{method}'")
        build.findings.append(
            finding(
                ERROR,
                "max.quantization",
                f"MAX cannot load '{method}' checkpoints",
                option="--quantization",
                fix="use a bfloat16, float8_e4m3fn, float4_e2m1fnx2 (NVFP4) or GPTQ checkpoint of the model",
            )
        )


def _dtype(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    dtype = (opt.value or "").lower()
    if launch.has("--quantization"):
        build.skip(opt, "the weight encoding comes from --quantization")
    elif dtype in DTYPE_ENCODINGS:
        build.add("--quantization-encoding", DTYPE_ENCODINGS[dtype])
    else:
        build.skip(opt, "MAX uses the checkpoint's own dtype when no encoding is given")


def _kv_cache_dtype(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    dtype = (opt.value or "").lower()
    if dtype in KV_CACHE_FORMATS:
        build.add("--kv-cache-format", KV_CACHE_FORMATS[dtype])
    elif dtype == "auto":
        build.skip(opt, "MAX picks the KV cache format from the model by default")
    else:
        build.skip(opt, f"MAX has no KV cache format for '{dtype}' (float32, bfloat16, float8_e4m3fn)")
        build.findings.append(
            finding(
                WARNING,
                "max.kv-cache-format",
                f"KV cache dtype '{dtype}' is dropped; MAX uses its default",
                option="--kv-cache-dtype",
                fix="use --kv-cache-dtype fp8 for float8_e4m3fn",
            )
        )


def _enforce_eager(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    build.add("--no-device-graph-capture")


def _served_model_name(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    names = opt.values
    if names:
        build.add("--served-model-name", names[0])
    for extra in names[1:]:
        build.skip("--served-model-name", "MAX serves one model name", extra)


def _parser(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    tool = opt.flag == "--tool-call-parser"
    names, known = (TOOL_PARSER_NAMES, MAX_TOOL_PARSERS) if tool else (REASONING_PARSER_NAMES, MAX_REASONING_PARSERS)
    given = opt.value or ""
    name = names.get(given, given)
    max_flag = "--tool-parser" if tool else "--reasoning-parser"
    if name in known or name.lower() == "none":
        build.add(max_flag, name)
        if name != given:
            build.findings.append(
                finding(NOTE, "max.parser-name", f"vLLM parser '{given}' is MAX's '{name}'", option=max_flag)
            )
    else:
        build.skip(opt, f"MAX 26.7 has no parser named '{given}'; it applies the architecture's default parser")
        build.findings.append(
            finding(
                WARNING,
                "max.parser-missing",
                f"{opt.flag} {given} is dropped; MAX uses the model's default parser",
                option=max_flag,
                fix=f"pick one of {', '.join(sorted(known))} if the default does not fit",
            )
        )


def _revision(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    build.add("--huggingface-model-revision", opt.value)
    build.add("--huggingface-weight-revision", opt.value)


def _lora_modules(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    for module in opt.values:
        name_path = _lora_name_path(module)
        if name_path is None:
            build.skip("--lora-modules", "not a name=path pair or a JSON object with name and path", module)
        else:
            build.add("--lora-paths", f"{name_path[0]}={name_path[1]}")
    if opt.values and not launch.switch("--enable-lora"):
        build.findings.append(
            finding(
                WARNING,
                "max.lora-disabled",
                "LoRA adapters are listed but LoRA is not enabled",
                option="--lora-modules",
                fix="add --enable-lora",
            )
        )


def _lora_name_path(text: str) -> tuple[str, str] | None:
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if isinstance(data, dict) and data.get("name") and data.get("path"):
            return str(data["name"]), str(data["path"])
        return None
    name, sep, path = text.partition("=")
    return (name, path) if sep and name and path else None


def _speculative(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    config = launch.get_json("--speculative-config")
    if not isinstance(config, dict):
        build.skip(opt, "not a JSON object")
        return
    translate_speculative(config, context, build)


def translate_speculative(config: dict[str, Any], context: DialectContext, build: MaxBuild) -> None:
    method = str(config.get("method", "")).lower()
    max_method = SPECULATIVE_METHODS.get(method) or ("mtp" if method.endswith("_mtp") else None)
    if max_method is None:
        build.skip(
            "--speculative-config",
            f"MAX has no '{method}' speculative method (eagle, mtp, dflash, dspark)",
            json.dumps(config, separators=(",", ":")),
        )
        build.findings.append(
            finding(
                WARNING,
                "max.speculative-method",
                f"speculative decoding ({method}) is off in the MAX launch",
                option="--speculative-config",
                fix="use an eagle, mtp, dflash or dspark drafter with MAX",
            )
        )
        return
    draft_arch = str(context.options.get("draft_architecture") or "")
    if max_method == "dflash" and draft_arch.startswith("DFlash2"):
        max_method = "dflash2"  # vLLM picks DFlash2 from the draft's architecture; MAX names it
    build.add("--speculative-method", max_method)
    if method != max_method:
        build.findings.append(
            finding(
                NOTE,
                "max.speculative-alias",
                f"vLLM method '{method}' runs as MAX '{max_method}'",
                option="--speculative-method",
            )
        )
    for key, value in config.items():
        if key == "method":
            continue
        if key == "model":
            build.add("--draft-model-path", str(value))
        elif key == "num_speculative_tokens":
            build.add("--num-speculative-tokens", str(value))
        elif key == "max_model_len":
            build.add("--draft-max-length", str(value))
        elif key == "revision":
            build.add("--draft-huggingface-model-revision", str(value))
        elif key == "quantization" and str(value).lower() in QUANTIZATION_ENCODINGS:
            build.add("--draft-quantization-encoding", QUANTIZATION_ENCODINGS[str(value).lower()])
        else:
            build.skip(f"--speculative-config.{key}", "MAX has no equivalent speculative setting", json.dumps(value))


RULES: dict[str, Rule] = {
    "--tensor-parallel-size": _parallel,
    "--data-parallel-size": _parallel,
    "--pipeline-parallel-size": _pipeline,
    "--enable-expert-parallel": _expert_parallel,
    "--max-model-len": _max_model_len,
    "--quantization": _quantization,
    "--dtype": _dtype,
    "--kv-cache-dtype": _kv_cache_dtype,
    "--enforce-eager": _enforce_eager,
    "--served-model-name": _served_model_name,
    "--revision": _revision,
    "--tool-call-parser": _parser,
    "--reasoning-parser": _parser,
    "--lora-modules": _lora_modules,
    "--speculative-config": _speculative,
}
