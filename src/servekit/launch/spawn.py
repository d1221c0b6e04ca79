"""Starting a run's processes: each in a process group of its own (or a group given), its output in its own log."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from servekit.atomic import appending
from servekit.errors import ServekitError


def start_process(command: Sequence[str], env: Mapping[str, str], log: Path, group: int | None = None) -> int:
    """Start ``command`` with stdout and stderr appended to ``log``; returns its pid.

    The first process of a run leads a new session (its pid is the run's process group);
    later ones join ``group``. The child outlives this process (``up --detach``).
    """
    full_env = {**os.environ, **{k: str(v) for k, v in env.items()}}
    placement = {"start_new_session": True} if group is None else {"process_group": group}
    try:
        with appending(log, binary=True) as out:
            proc = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=full_env, close_fds=True, **placement)
    except OSError as exc:
        raise ServekitError(f"cannot start {command[0]}: {exc.strerror}",
                            fix="check the engine environment (servekit engine list)") from None
    return proc.pid
