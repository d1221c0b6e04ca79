"""Reading config.json values that families name differently."""

from __future__ import annotations

from typing import Any


def first_key(cfg: dict[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` the config states (not None), else None."""
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return value
    return None
