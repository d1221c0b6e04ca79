"""What SGLang 0.5.23 calls things, next to what vLLM calls them.

Parser names: SGLang's static name lists (``sglang.srt.function_call.parser_names`` and
``sglang.srt.parser.reasoning_parser_names``, stored in the catalog's registries). A vLLM name
that is also an SGLang name carries over as is; the tables below hold the ones spelled
differently for the same output format.
"""

from __future__ import annotations

TOOL_CALL_PARSERS = {
    "deepseek_v3": "deepseekv3",
    "deepseek_v31": "deepseekv31",
    "deepseek_v32": "deepseekv32",
    "deepseek_v4": "deepseekv4",
    "deepseek_v41": "deepseekv41",
    "apertus": "apertus2509",
    "llama3_json": "llama3",
    "llama4_json": "llama3",
    "llama4_pythonic": "pythonic",
    "minimax_m2": "minimax-m2",
    "minimax_m3": "minimax-m3",
    "openai": "gpt-oss",
    "muse_glimmer": "muse",
    "hunyuan_a13b": "hunyuan",
    "qwen3_json": "qwen25",
    "qwen3_xml": "qwen3_coder",
}
REASONING_PARSERS = {
    "deepseek_r1": "deepseek-r1",
    "deepseek_v3": "deepseek-v3",
    "deepseek_v4": "deepseek-v4",
    "deepseek_v41": "deepseek-v41",
    "openai_gptoss": "gpt-oss",
    "minimax_m2": "minimax",
    "minimax_m2_append_think": "minimax-append-think",
    "minimax_m3": "minimax-m3",
    "muse_glimmer": "muse",
    "nemotron_v3": "nemotron_3",
    "hunyuan_a13b": "hunyuan",
}
# vLLM --speculative-config "method" -> SGLang --speculative-algorithm
SPECULATIVE_ALGORITHMS = {"eagle": "EAGLE", "eagle3": "EAGLE3", "mtp": "NEXTN", "ngram": "NGRAM",
                          "deepseek_mtp": "NEXTN", "standalone": "STANDALONE", "draft_model": "STANDALONE"}
# vLLM --kv-cache-dtype -> SGLang --kv-cache-dtype
KV_CACHE_DTYPES = {"fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2", "bfloat16": "bfloat16",
                   "auto": "auto", "nvfp4": "fp4_e2m1"}
# vLLM kv_transfer_config.kv_connector -> SGLang --disaggregation-transfer-backend
TRANSFER_BACKENDS = {"NixlConnector": "nixl", "MooncakeConnector": "mooncake", "MooncakeConnectorV1": "mooncake"}
KV_ROLES = {"kv_producer": "prefill", "kv_consumer": "decode"}

# vLLM option -> SGLang option, value carried over unchanged (when SGLang's catalog accepts it).
RENAMED = {
    "--tensor-parallel-size": "--tp",
    "--data-parallel-size": "--dp",
    "--pipeline-parallel-size": "--pp-size",
    "--gpu-memory-utilization": "--mem-fraction-static",
    "--max-model-len": "--context-length",
    "--max-num-seqs": "--max-running-requests",
    "--max-num-batched-tokens": "--chunked-prefill-size",
    "--served-model-name": "--served-model-name",
    "--quantization": "--quantization",
    "--dtype": "--dtype",
    "--chat-template": "--chat-template",
    "--port": "--port",
    "--host": "--host",
    "--revision": "--revision",
    "--tokenizer": "--tokenizer-path",
    "--download-dir": "--download-dir",
    "--seed": "--random-seed",
    "--load-format": "--load-format",
    "--api-key": "--api-key",
    "--max-lora-rank": "--max-lora-rank",
    "--max-loras": "--max-loras-per-batch",
    "--nnodes": "--nnodes",
    "--node-rank": "--node-rank",
}
# vLLM switch -> SGLang switch
SWITCHES = {
    "--trust-remote-code": "--trust-remote-code",
    "--enforce-eager": "--disable-cuda-graph",
    "--enable-lora": "--enable-lora",
    "--skip-tokenizer-init": "--skip-tokenizer-init",
}
# vLLM options with no SGLang counterpart, and why.
NO_EQUIVALENT = {
    "--enable-auto-tool-choice": "SGLang parses tool calls whenever --tool-call-parser is set",
    "--compilation-config": "SGLang captures CUDA graphs itself (--cuda-graph-max-bs); vLLM's torch.compile "
    "settings do not apply",
    "--async-scheduling": "SGLang overlaps scheduling by default (--disable-overlap-schedule turns it off)",
    "--block-size": "SGLang's KV pages are sized with --page-size (default 1 token)",
    "--swap-space": "SGLang has no CPU swap space option",
    "--distributed-executor-backend": "SGLang runs its own multi-process runtime",
    "--disable-log-requests": "SGLang logs no requests unless --log-requests is set",
    "--enable-log-requests": "SGLang's request logging is --log-requests",
    "--uvicorn-log-level": "SGLang's server log level is --log-level",
    "--additional-config": "platform plugin configuration has no meaning for SGLang",
    "--headless": "SGLang worker nodes are started with --node-rank, and serve no HTTP themselves",
    "--data-parallel-size-local": "SGLang spreads data-parallel ranks over --nnodes itself",
    "--data-parallel-start-rank": "SGLang spreads data-parallel ranks over --nnodes itself",
    "--data-parallel-rpc-port": "SGLang's ranks meet at --dist-init-addr",
    "--master-port": "folded into --dist-init-addr HOST:PORT",
}
