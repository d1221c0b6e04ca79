"""Ask the real vLLM whether it takes a JSON value for one of its config options, as a launch meets it.

Run with a vLLM environment's interpreter. Reads JSON lines {"flag": "--compilation-config",
"value": {...}}; writes one JSON line per input: {"accepted": bool, "locs": [dotted keys a pydantic
ValidationError names], "message": ...}. Options the argument parser turns into a config class
("parse" stage) go through vLLM's own parser; ``--speculative-config``, which the engine turns into
a SpeculativeConfig at startup, goes through EngineArgs.create_speculative_config (the target model
and parallel configs left empty, as the n-gram method needs neither).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile
from typing import Any

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
logging.disable(logging.CRITICAL)

from probe_vllm_parser import build_parser  # noqa: E402

STARTUP = {"--speculative-config": ("speculative_config", "create_speculative_config")}


def _locs(exc: BaseException) -> list[str]:
    from pydantic import ValidationError

    while exc is not None:
        if isinstance(exc, ValidationError):
            return [".".join(str(part) for part in e.get("loc", ())) for e in exc.errors()]
        exc = exc.__cause__ or exc.__context__
    return []


def at_startup(flag: str, value: Any) -> dict[str, Any]:
    from vllm.engine.arg_utils import EngineArgs

    field, builder = STARTUP[flag]
    with tempfile.TemporaryDirectory() as model:  # a local path: nothing is looked up
        try:
            getattr(EngineArgs(model=model, **{field: value}), builder)(None, None)
        except Exception as exc:  # noqa: BLE001 - whatever the engine raises is its refusal
            return {"accepted": False, "locs": _locs(exc), "message": f"{type(exc).__name__}: {exc}"}
    return {"accepted": True, "locs": [], "message": ""}


def at_parse(parser: Any, flag: str, value: Any) -> dict[str, Any]:
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(["serve", "m", flag, json.dumps(value)])
    except SystemExit as exc:  # argparse printed the error, a ValidationError's repr among it
        return {"accepted": False, "locs": [], "message": stderr.getvalue().strip() or f"exit {exc.code}"}
    except Exception as exc:  # noqa: BLE001 - a validator may raise a plain KeyError or ValueError
        return {"accepted": False, "locs": _locs(exc), "message": f"{type(exc).__name__}: {exc}"}
    return {"accepted": True, "locs": [], "message": ""}


def main() -> int:
    parser = build_parser()
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        judge = at_startup if case["flag"] in STARTUP else lambda f, v: at_parse(parser, f, v)
        print(json.dumps(judge(case["flag"], case["value"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
