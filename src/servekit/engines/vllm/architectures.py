"""The model architectures vLLM serves, per version (``data/architectures-<version>.json``,
written by scripts/extract_vllm_architectures.py from vLLM's own model registry).

An architecture is the ``architectures`` entry of a checkpoint's config.json. Each is listed with
the kind of model vLLM registers it as (``text_generation``, ``multimodal``, ``embedding``, ...);
architectures vLLM no longer serves are kept apart with the last version that did.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from servekit.engines.vllm.catalog import DEFAULT_VERSION
from servekit.errors import ServekitError
from servekit.records import record

DATA_DIR = Path(__file__).resolve().parent / "data"
SCRIPT = "scripts/extract_vllm_architectures.py"
GENERATIVE_KINDS = ("text_generation", "multimodal")
"""Kinds ``vllm serve`` answers chat and completion requests for."""


@record
class SupportedArchitectures:
    """The architectures one vLLM version serves, and the ones it dropped."""

    engine: str
    version: str
    kinds: dict[str, str]
    """Architecture -> kind of model vLLM registers it as."""
    previously: dict[str, str]
    """Dropped architecture -> the last vLLM version that served it."""
    source: str

    def kind_of(self, architecture: str) -> str | None:
        return self.kinds.get(architecture)

    def supports(self, architecture: str) -> bool:
        return architecture in self.kinds

    def generative(self, architecture: str) -> bool:
        return self.kinds.get(architecture) in GENERATIVE_KINDS


def data_file(version: str) -> Path:
    return DATA_DIR / f"architectures-{version}.json"


@lru_cache(maxsize=None)
def supported_architectures(version: str | None = None) -> SupportedArchitectures:
    """The architectures vLLM ``version`` serves (default: the pinned version)."""
    wanted = version or DEFAULT_VERSION
    path = data_file(wanted)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = sorted(p.stem.split("-", 1)[1] for p in DATA_DIR.glob("architectures-*.json"))
        raise ServekitError(
            f"no list of vLLM {wanted} architectures ({path.name})",
            fix=f"use one of: {', '.join(known)}, or extract it with {SCRIPT}",
        ) from None
    return SupportedArchitectures(
        engine=str(doc.get("engine", "vllm")),
        version=str(doc["version"]),
        kinds={str(k): str(v) for k, v in doc["architectures"].items()},
        previously={str(k): str(v) for k, v in (doc.get("previously_supported") or {}).items()},
        source=f"{path.name} ({doc.get('source', SCRIPT)})",
    )
