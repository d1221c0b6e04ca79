"""Which checkpoints have facts shipped with servekit, and where their files lie (no parsing)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"


def file_for(model_id: str) -> Path:
    """``org/name`` -> ``data/org__name.json``."""
    return DATA_DIR / (model_id.replace("/", "__") + ".json")


@lru_cache(maxsize=1)
def _ids() -> tuple[str, ...]:
    return tuple(sorted(p.stem.replace("__", "/") for p in DATA_DIR.glob("*.json")))


def shipped_model_ids() -> list[str]:
    return list(_ids())


def has_shipped_facts(model_id: str) -> bool:
    """Whether facts ship for this checkpoint; Hub ids are case-insensitive."""
    wanted = model_id.lower()
    return any(known.lower() == wanted for known in _ids())
