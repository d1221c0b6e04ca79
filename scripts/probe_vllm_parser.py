"""Ask the real vLLM whether it would accept ``vllm serve`` option lists, without starting anything.

Run with a vLLM environment's interpreter (0.32 whole, or 0.33's minimal parser environment
with VLLM_TARGET_DEVICE=cpu). Reads JSON lines, each a list of words as they follow
``vllm serve``; writes one JSON line per input: {"accepted": bool, "stage": ..., "message": ...}.
Stages, in the order vLLM meets them: "parse" (its argument parser), "validate" (its serve
argument checks), "startup" (the name lookups startup does before loading a model: tool-call
and reasoning parsers, load format, tokenizer mode, attention backend, quantization method).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
from typing import Any

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
logging.disable(logging.CRITICAL)


def cli_args() -> Any:
    """vLLM's serve-argument module: launchers.cli_args up to 0.32, common.cli_args from 0.33."""
    import importlib

    try:
        return importlib.import_module("vllm.entrypoints.common.cli_args")
    except ModuleNotFoundError:
        return importlib.import_module("vllm.entrypoints.launchers.cli_args")


def validate_api_server_args(args: Any) -> None:
    module = cli_args()
    if hasattr(module, "validate_api_server_args"):
        module.validate_api_server_args(args)
    else:
        from vllm.entrypoints.launchers.launcher import validate_api_server_args as validate

        validate(args)


def build_parser() -> Any:
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(prog="vllm")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(subparsers)
    return parser


def startup_lookups(args: Any) -> None:
    """The name lookups vLLM does at startup before it touches the model."""
    from vllm.config.attention import AttentionConfig
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
    from vllm.model_executor.model_loader import _LOAD_FORMAT_TO_MODEL_LOADER
    from vllm.reasoning import ReasoningParserManager
    from vllm.tokenizers.registry import TokenizerRegistry
    from vllm.tool_parsers import ToolParserManager

    if args.tool_parser_plugin and len(args.tool_parser_plugin) > 3:
        ToolParserManager.import_tool_parser(args.tool_parser_plugin)
    if args.reasoning_parser_plugin and len(args.reasoning_parser_plugin) > 3:
        ReasoningParserManager.import_reasoning_parser(args.reasoning_parser_plugin)
    validate_api_server_args(args)
    if args.reasoning_parser:  # the structured-output setup looks it up while the engine starts
        ReasoningParserManager.get_reasoning_parser(args.reasoning_parser)
    if isinstance(args.load_format, str) and args.load_format.lower() not in _LOAD_FORMAT_TO_MODEL_LOADER:
        raise ValueError(f"unknown load format {args.load_format}")
    mode = args.tokenizer_mode.lower() if isinstance(args.tokenizer_mode, str) else "auto"
    if mode != "auto" and mode not in TokenizerRegistry.tokenizers:
        raise ValueError(f"no tokenizer registered for {mode}")
    if args.attention_backend is not None:
        AttentionConfig.validate_backend_before(args.attention_backend)
    if isinstance(args.quantization, str) and args.quantization not in QUANTIZATION_METHODS:
        raise ValueError(f"unknown quantization {args.quantization}")


def judge(parser: Any, words: list[str]) -> dict[str, Any]:
    validate_parsed_serve_args = cli_args().validate_parsed_serve_args
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            args = parser.parse_args(["serve", *words])
    except SystemExit as exc:
        text = stderr.getvalue().strip().splitlines()
        return {"accepted": False, "stage": "parse", "message": text[-1] if text else f"exit {exc.code}"}
    except Exception as exc:  # noqa: BLE001 - vLLM's own rewriting raises plain errors too
        return {"accepted": False, "stage": "parse", "message": f"{type(exc).__name__}: {exc}"}
    for stage, check in (("validate", validate_parsed_serve_args), ("startup", startup_lookups)):
        try:
            check(args)
        except Exception as exc:  # noqa: BLE001
            return {"accepted": False, "stage": stage, "message": f"{type(exc).__name__}: {exc}"}
    return {"accepted": True, "stage": "startup", "message": ""}


def main() -> int:
    parser = build_parser()
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(judge(parser, json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
