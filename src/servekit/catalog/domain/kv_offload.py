"""A KV-offload option (``taxonomy.kv_offload.<key>``): a choice that composes with the serving
strategy, adding arguments, env, an install step or a companion command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.feature import Companion
from servekit.catalog.domain.values import Doc, mapping


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class KvOffload:
    """One option; values stay as written (None when absent)."""

    key: str
    args: Any
    env: Any
    strategies: Any
    """Allow-list of serving strategies; anything but a non-empty list means every one."""
    brands: Any
    """Allow-list of GPU brands; anything but a non-empty list means every one."""
    requires_opt_in: Any
    install: Any
    min_vllm_version: Any
    companion: Companion
    raw: Doc

    @classmethod
    def of(cls, key: str, raw: Any) -> KvOffload:
        doc = mapping(raw)
        get = doc.get
        return cls(key, get("args"), get("env"), get("strategies"), get("brands"), get("requires_opt_in"),
                   get("install"), get("min_vllm_version"), Companion.of(get("companion")), doc)
