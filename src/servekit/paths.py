"""Where servekit keeps its own files: one place, overridable for tests and CI.

``SERVEKIT_HOME`` moves everything (engine environments, logs, caches); otherwise the XDG
cache directory is used. ``SERVEKIT_ENGINES_DIR`` moves only the engine environments, so a test
run can use engines installed once while everything else goes to a temporary home.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    explicit = os.environ.get("SERVEKIT_HOME")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "servekit"


def log_dir() -> Path:
    return home() / "logs"


def engines_dir() -> Path:
    """Engine environments; ``SERVEKIT_ENGINES_DIR`` keeps them apart from the rest (tests, CI)."""
    explicit = os.environ.get("SERVEKIT_ENGINES_DIR")
    return Path(explicit).expanduser() if explicit else home() / "engines"
