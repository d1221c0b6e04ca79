"""Run a subprocess with its whole output appended to a log file; failures become one error type."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from servekit.atomic import append_text
from servekit.errors import ServekitError

TAIL_LINES = 20


class CommandFailed(ServekitError):
    """A subprocess exited non-zero: carries the command, exit code, output tail and log path."""

    def __init__(self, argv: Sequence[str], returncode: int, output: str, log: Path | None) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.output = output
        self.log = log
        tail = "\n".join(output.rstrip().splitlines()[-TAIL_LINES:])
        where = f"; full log: {log}" if log else ""
        super().__init__(
            f"command failed with exit code {returncode}: {shlex.join(self.argv)}{where}\n{tail}",
        )

    def __str__(self) -> str:
        return self.message


def run_logged(
    argv: Sequence[str],
    *,
    log: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """Run ``argv`` to completion; return its combined output or raise :class:`CommandFailed`."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        proc = subprocess.run(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=full_env,
            cwd=cwd,
            check=False,
        )
    except OSError as exc:
        raise CommandFailed(argv, 127, str(exc), log) from exc
    if log is not None:
        append_text(log, f"$ {shlex.join(list(argv))}\n{proc.stdout}\n[exit {proc.returncode}]\n")
    if proc.returncode != 0:
        raise CommandFailed(argv, proc.returncode, proc.stdout, log)
    return proc.stdout
