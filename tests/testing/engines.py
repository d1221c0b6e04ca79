"""Where the engine-marked tests find the real engines (installed by scripts/install_engines.sh)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servekit.engines.environments import find_env

REPO = Path(__file__).resolve().parents[2]


def engine_python(requirement: str) -> Path:
    """The interpreter of an installed engine environment, or skip the test saying how to get it."""
    roots = [os.environ.get("SERVEKIT_ENGINES_DIR"), str(REPO / ".servekit-ci" / "engines")]
    for root in filter(None, roots):
        env = find_env(requirement, root=Path(root))
        if env is not None:
            return env.python
    pytest.skip(f"{requirement} is not installed under {' or '.join(filter(None, roots))}; "
                "run scripts/install_engines.sh")
