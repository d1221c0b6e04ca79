"""Ask the real SGLang whether its parser accepts ``python -m sglang.launch_server`` option lists,
without starting anything.

Run with the interpreter of the minimal SGLang parser environment (scripts/install_parser_envs.sh).
Reads JSON lines, each a list of words as they follow ``sglang.launch_server``; writes one JSON
line per input: {"accepted": bool, "stage": "parse", "message": ...}. SGLang's own value checks
(``resolve_once`` / ``check_server_args``) need the model's config.json and are not run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
from typing import Any

logging.disable(logging.CRITICAL)


def build_parser() -> argparse.ArgumentParser:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="python -m sglang.launch_server")
    ServerArgs.add_cli_args(parser)
    return parser


def judge(parser: argparse.ArgumentParser, words: list[str]) -> dict[str, Any]:
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(words)
    except SystemExit as exc:
        text = stderr.getvalue().strip().splitlines()
        return {"accepted": False, "stage": "parse", "message": text[-1] if text else f"exit {exc.code}"}
    except Exception as exc:  # noqa: BLE001 - an argparse type function may raise plain errors
        return {"accepted": False, "stage": "parse", "message": f"{type(exc).__name__}: {exc}"}
    return {"accepted": True, "stage": "parse", "message": ""}


def main() -> int:
    parser = build_parser()
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(judge(parser, json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
