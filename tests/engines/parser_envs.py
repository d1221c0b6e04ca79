"""Where the engine-marked tests find the minimal parser environments (scripts/install_parser_envs.sh)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def parser_python(name: str) -> Path:
    """The interpreter of a minimal parser environment (``vllm-0.33.0``), or skip saying how to build it."""
    root = Path(os.environ.get("SERVEKIT_PARSERS_DIR") or REPO / ".servekit-ci" / "parsers")
    python = root / name / "bin" / "python"
    if not (root / name / "stamp").is_file() or not python.is_file():
        pytest.skip(f"no {name} parser environment under {root}; run scripts/install_parser_envs.sh")
    return python
