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

from servekit.engines.dialect import ERROR, NOTE, WARNING, DialectContext, Untranslated, finding
from servekit.engines.findings import Finding
from servekit.engines.vllm_launch import Option, VllmLaunch

# vLLM --quantization / --dtype / recipe precision -> MAX --quantization-encoding
QUANTIZATION_ENCODINGS = {
    "fp8": "float8_e4m3fn",
    "modelopt_fp4": "float4_e2m1fnx2",
    "nvfp4": "float4_e2m1fnx2",
    "gptq": "gptq",
}
DTYPE_ENCODINGS = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "half": "float16",
    "fp16": "float16",
    "float32": "float32",
    "float": "float32",
    "fp32": "float32",
}
PRECISION_ENCODINGS = {**DTYPE_ENCODINGS, "fp8": "float8_e4m3fn", "nvfp4": "float4_e2m1fnx2"}
KV_CACHE_FORMATS = {
    "fp8": "float8_e4m3fn",
    "fp8_e4m3": "float8_e4m3fn",
    "bfloat16": "bfloat16",
    "float32": "float32",
}
SPECULATIVE_METHODS = {"eagle": "eagle", "eagle3": "eagle", "mtp": "mtp", "dflash": "dflash", "dspark": "dspark"}
SERVE_ONLY = frozenset({"--port", "--host"})
# Parser names registered in MAX 26.7 (max.pipelines.lib.tool_parsing / reasoning), and the
# vLLM names that parse the same output format.
MAX_TOOL_PARSERS = frozenset({
    "llama", "gemma4", "inkling", "glm45", "muse_glimmer", "deepseekv3", "deepseekv3_1", "deepseekv4", "laguna",
    "kimik2_5", "qwen3_5", "minimax_m2",
})
MAX_REASONING_PARSERS = frozenset({
    "gemma4", "inkling", "glm45", "muse_glimmer", "deepseekv4", "laguna", "kimik2_5", "qwen3_5", "minimax_m2",
})
TOOL_PARSER_NAMES = {
    "llama3_json": "llama", "llama4_json": "llama", "deepseek_v3": "deepseekv3", "deepseek_v31": "deepseekv3_1",
    "deepseek_v4": "deepseekv4", "kimi_k2": "kimik2_5", "qwen3_coder": "qwen3_5", "glm47": "glm45",
}
REASONING_PARSER_NAMES = {
    "qwen3": "qwen3_5", "kimi_k2": "kimik2_5", "deepseek_v4": "deepseekv4", "minimax_m2_append_think": "minimax_m2",
}

# vLLM option -> MAX option, value carried over unchanged.
RENAMED = {
    "--max-num-seqs": "--max-batch-size",
    "--gpu-memory-utilization": "--device-memory-utilization",
    "--max-num-batched-tokens": "--max-batch-input-tokens",
    "--chat-template": "--chat-template",
    "--max-loras": "--max-num-loras",
    "--max-lora-rank": "--max-lora-rank",
    "--port": "--port",
    "--host": "--host",
}
SWITCHES = ("--trust-remote-code", "--enable-prefix-caching", "--enable-chunked-prefill", "--enable-lora")

# vLLM options with no MAX counterpart, and why (anything not listed anywhere gets a generic reason).
NO_EQUIVALENT = {
    "--hf-overrides": "MAX has no config override option; edit config.json in a local copy of the model",
    "--compilation-config": "MAX compiles its own graphs; vLLM's torch.compile/CUDA graph settings do not apply",
    "--mm-encoder-tp-mode": "MAX has no vision-encoder parallelism option",
    "--language-model-only": "MAX has no text-only switch for multimodal architectures",
    "--kv-transfer-config": "MAX uses --kv-connector-config with its own connector types; configure it separately",
    "--seed": "MAX has no global sampling seed option",
    "--download-dir": "MAX downloads into the Hugging Face cache; set HF_HOME instead",
    "--tokenizer": "MAX loads the tokenizer from the model repository",
    "--enable-auto-tool-choice": "MAX parses tool calls whenever a tool parser is set (--tool-parser)",
    "--disable-log-requests": "MAX has no request-logging switch",
    "--enable-log-requests": "MAX has no request-logging switch",
    "--disable-log-stats": "MAX has no stats-logging switch",
    "--max-logprobs": "MAX has no logprobs cap option",
    "--generation-config": "MAX reads generation defaults from the model repository",
    "--override-generation-config": "MAX sets sampling defaults with --temperature / --top-k only",
    "--limit-mm-per-prompt": "MAX has no per-prompt media limit option",
    "--async-scheduling": "MAX schedules with its own overlap scheduler (--enable-overlap-scheduler)",
    "--swap-space": "MAX has no CPU swap space option",
    "--cpu-offload-gb": "MAX has no weight offload option",
    "--load-format": "MAX picks the weight format from the repository",
    "--distributed-executor-backend": "MAX runs its own multi-device runtime",
    "--uvicorn-log-level": "MAX has no server log level option on serve (use max --log-level)",
    "--api-key": "MAX serve has no API key option",
    "--additional-config": "platform plugin configuration has no meaning for MAX",
    "--block-size": "MAX sizes KV pages itself (--kv-cache-page-size, default 128); vLLM's block size does not carry over",
}


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
    for name, value in sorted(context.env.items()):
        if name.startswith("VLLM_"):
            build.skip(name, "vLLM environment variable; MAX does not read it", value)
    return build


def device_options(launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> list[tuple[str, str | None]]:
    """``--devices`` from TP x DP (or the explicit ``devices`` option), ``--data-parallel-degree``."""
    tp = launch.get_int("--tensor-parallel-size", 1) or 1
    dp = launch.get_int("--data-parallel-size", 1) or 1
    hardware = context.hardware or {}
    explicit = context.options.get("devices")
    if str(hardware.get("generation", "")).lower() == "cpu" or explicit == "cpu":
        out: list[tuple[str, str | None]] = [("--devices", "cpu")]
        if tp * dp > 1:
            build.findings.append(
                finding(WARNING, "max.cpu-parallel", f"TP x DP = {tp * dp} has no meaning on CPU; MAX runs one CPU device",
                        option="--tensor-parallel-size", fix="drop --tensor-parallel-size / --data-parallel-size")
            )
        return out
    ids = list(explicit) if isinstance(explicit, (list, tuple)) else list(range(tp * dp))
    if len(ids) != tp * dp:
        build.findings.append(
            finding(ERROR, "max.device-count", f"{len(ids)} devices given but TP {tp} x DP {dp} needs {tp * dp}",
                    option="--devices", fix=f"list exactly {tp * dp} device ids")
        )
    per_node = hardware.get("gpu_count")
    if isinstance(per_node, int) and tp * dp > per_node:
        build.findings.append(
            finding(ERROR, "max.too-many-devices", f"TP {tp} x DP {dp} = {tp * dp} devices but the node has {per_node}",
                    option="--tensor-parallel-size", fix="lower the parallel sizes; MAX serves from one node")
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
            finding(ERROR, "max.pipeline-parallel", f"pipeline parallel size {size} cannot be expressed in MAX",
                    option="--pipeline-parallel-size", fix="use tensor parallelism over the node's devices instead")
        )


def _expert_parallel(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
    if launch.switch("--enable-expert-parallel"):
        tp = launch.get_int("--tensor-parallel-size", 1) or 1
        dp = launch.get_int("--data-parallel-size", 1) or 1
        build.add("--ep-size", str(tp * dp))


def _max_model_len(opt: Option, launch: VllmLaunch, context: DialectContext, build: MaxBuild) -> None:
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
            finding(ERROR, "max.quantization", f"MAX cannot load '{method}' checkpoints",
                    option="--quantization",
                    fix="use a bfloat16, float8_e4m3fn, float4_e2m1fnx2 (NVFP4) or GPTQ checkpoint of the model")
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
            finding(WARNING, "max.kv-cache-format", f"KV cache dtype '{dtype}' is dropped; MAX uses its default",
                    option="--kv-cache-dtype", fix="use --kv-cache-dtype fp8 for float8_e4m3fn")
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
            build.findings.append(finding(NOTE, "max.parser-name", f"vLLM parser '{given}' is MAX's '{name}'",
                                          option=max_flag))
    else:
        build.skip(opt, f"MAX 26.7 has no parser named '{given}'; it applies the architecture's default parser")
        build.findings.append(
            finding(WARNING, "max.parser-missing", f"{opt.flag} {given} is dropped; MAX uses the model's default parser",
                    option=max_flag, fix=f"pick one of {', '.join(sorted(known))} if the default does not fit")
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
            finding(WARNING, "max.lora-disabled", "LoRA adapters are listed but LoRA is not enabled",
                    option="--lora-modules", fix="add --enable-lora")
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
    translate_speculative(config, build)


def translate_speculative(config: dict[str, Any], build: MaxBuild) -> None:
    method = str(config.get("method", "")).lower()
    max_method = SPECULATIVE_METHODS.get(method) or ("mtp" if method.endswith("_mtp") else None)
    if max_method is None:
        build.skip("--speculative-config", f"MAX has no '{method}' speculative method (eagle, mtp, dflash, dspark)",
                   json.dumps(config, separators=(",", ":")))
        build.findings.append(
            finding(WARNING, "max.speculative-method", f"speculative decoding ({method}) is off in the MAX launch",
                    option="--speculative-config", fix="use an eagle, mtp, dflash or dspark drafter with MAX")
        )
        return
    build.add("--speculative-method", max_method)
    if method != max_method:
        build.findings.append(
            finding(NOTE, "max.speculative-alias", f"vLLM method '{method}' runs as MAX '{max_method}'",
                    option="--speculative-method")
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
            build.skip(f"--speculative-config.{key}", "MAX has no equivalent speculative setting",
                       json.dumps(value))


def parse_token_count(text: str) -> int:
    """vLLM's human-readable lengths: ``32768``, ``32k`` (x1000), ``32K`` (x1024), ``1m`` / ``1M``."""
    from servekit.errors import ServekitError

    units = {"k": 1000, "K": 1024, "m": 1000**2, "M": 1024**2, "g": 1000**3, "G": 1024**3}
    raw = text.strip()
    try:
        if raw and raw[-1] in units:
            return int(float(raw[:-1]) * units[raw[-1]])
        return int(raw)
    except ValueError:
        raise ServekitError(f"--max-model-len {text!r} is not a length", fix="pass a token count such as 32768") from None


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
