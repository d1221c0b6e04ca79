"""Where servekit keeps its own files: one place, overridable for tests and CI.

``SERVEKIT_HOME`` moves everything (engine environments, logs, caches); otherwise the XDG
cache directory is used.
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
    return home() / "engines"
