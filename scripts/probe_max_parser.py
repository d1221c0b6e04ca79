"""Ask the real MAX whether it would accept ``max serve`` / ``max warm-cache`` option lists.

Run with a MAX environment's interpreter. Reads JSON lines {"command": "serve", "args": [...]};
writes one JSON line per input: {"accepted": bool, "stage": "parse" | "model", "message": ...}. It
builds the click context (``make_context``), which parses and converts every option and starts
nothing, then makes the check each model-loading command makes first ("No model specified").
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from typing import Any

# Sub-commands that load a model; with no --model/--model-path MAX stops before loading anything
# (serve: "No model specified"; the others: an empty Hugging Face repo id).
MODEL_COMMANDS = ("serve", "generate", "encode", "warm-cache")


def judge(commands: Any, command: str, words: list[str]) -> dict[str, Any]:
    import click

    cmd = commands[command]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ctx = cmd.make_context(command, list(words))
    except click.exceptions.ClickException as exc:
        return {"accepted": False, "stage": "parse", "message": exc.format_message()}
    except click.exceptions.Exit as exc:
        return {"accepted": False, "stage": "parse", "message": f"exit {exc.exit_code}"}
    except Exception as exc:  # noqa: BLE001 - MAX's own pre-parse checks raise plain errors
        return {"accepted": False, "stage": "parse", "message": f"{type(exc).__name__}: {exc}"}
    if command in MODEL_COMMANDS and not ctx.params.get("model_path") and not ctx.params.get("config_file"):
        return {"accepted": False, "stage": "model", "message": "No model specified"}
    return {"accepted": True, "stage": "parse", "message": ""}


def main() -> int:
    from max._entrypoints.pipelines import main as max_main

    for line in sys.stdin:
        if line.strip():
            request = json.loads(line)
            print(json.dumps(judge(max_main.commands, request["command"], request["args"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
