"""What MAX 26.7 calls things, next to what vLLM calls them: weight encodings, KV cache
formats, speculative methods, parser names, and the vLLM options MAX has no counterpart for.

Facts read from ``max serve --help`` and the parsers MAX registers (checked against the
installed engine by the engine-marked tests).
"""

from __future__ import annotations

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
MAX_TOOL_PARSERS = frozenset(
    {
        "llama",
        "gemma4",
        "inkling",
        "glm45",
        "muse_glimmer",
        "deepseekv3",
        "deepseekv3_1",
        "deepseekv4",
        "laguna",
        "kimik2_5",
        "qwen3_5",
        "minimax_m2",
    }
)
MAX_REASONING_PARSERS = frozenset(
    {
        "gemma4",
        "inkling",
        "glm45",
        "muse_glimmer",
        "deepseekv4",
        "laguna",
        "kimik2_5",
        "qwen3_5",
        "minimax_m2",
    }
)
TOOL_PARSER_NAMES = {
    "llama3_json": "llama",
    "llama4_json": "llama",
    "deepseek_v3": "deepseekv3",
    "deepseek_v31": "deepseekv3_1",
    "deepseek_v4": "deepseekv4",
    "kimi_k2": "kimik2_5",
    "qwen3_coder": "qwen3_5",
    "glm47": "glm45",
}
REASONING_PARSER_NAMES = {
    "qwen3": "qwen3_5",
    "kimi_k2": "kimik2_5",
    "deepseek_v4": "deepseekv4",
    "minimax_m2_append_think": "minimax_m2",
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
    "--block-size": "MAX sizes KV pages itself (--kv-cache-page-size, default 128)",
}
