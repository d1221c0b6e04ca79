"""The plan's shared-memory size, as the ``sizeLimit`` of a pod's memory-backed ``/dev/shm``.

The plan states it in its container form: ``docker run --shm-size 16g``. Docker reads the size
as ``<number><unit>`` with an optional unit b, k, m or g in powers of 1024 (no unit: bytes), see
https://docs.docker.com/reference/cli/docker/container/run/#shm-size ; Kubernetes writes the
same amounts as Ki, Mi and Gi. A plan that shares the host's IPC namespace instead (``--ipc
host``) states no size, and its pod's ``/dev/shm`` has no limit beyond the pod's memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from servekit.engines.common.command_line import option_value
from servekit.synthesis.docker import docker_argv
from servekit.synthesis.plan import Plan

SHM_FLAG = "--shm-size"
_SIZE = re.compile(r"^([1-9][0-9]*)([bkmg]?)$", re.IGNORECASE)
_UNITS = {"": "", "b": "", "k": "Ki", "m": "Mi", "g": "Gi"}


def docker_shm_size(argv: Sequence[str]) -> str | None:
    """The last ``--shm-size`` of a ``docker run`` argv as a Kubernetes quantity (None: not given
    or not a size docker accepts)."""
    match = _SIZE.match(option_value(argv, SHM_FLAG) or "")
    return f"{match.group(1)}{_UNITS[match.group(2).lower()]}" if match else None


def plan_shm_limit(plan: Plan) -> str | None:
    """The shared-memory size of the plan's container form, if it states one."""
    if not plan.processes:
        return None
    process = plan.processes[0]
    argv = docker_argv(plan.docker, list(process.argv()), {**plan.env_map(), **process.env_map()})
    return docker_shm_size([str(t) for t in argv])
