"""Serving strategies (``strategies/*.yaml``) and KV-store deployments (``kv_store/*.yaml``)
as the synthesis reads them: deploy type, arguments, env and the PD roles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.values import Doc, mapping

PD_ROLES = ("prefill", "decode")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StrategyRole:
    """The prefill or decode side of a disaggregated strategy."""

    vllm_args: Any
    env: Any
    parallelism: Any
    parallel_flag: Any
    tp: Any
    raw: Doc

    @classmethod
    def of(cls, raw: Any) -> StrategyRole:
        doc = mapping(raw)
        get = doc.get
        return cls(get("vllm_args"), get("env"), get("parallelism"), get("parallel_flag"), get("tp"), doc)


EMPTY_ROLE = StrategyRole.of({})


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Strategy:
    """One strategy document; ``deploy_type`` stays as written (None when absent)."""

    name: str
    deploy_type: Any
    display_name: Any
    vllm_args: Any
    env: Any
    parallel_flag: Any
    parallelism: Any
    router: Doc
    """``router`` as written (a PD plan publishes it verbatim)."""
    router_policy: Any
    kv_offload: Any
    allows_kv_offload: Any
    prefill: StrategyRole
    decode: StrategyRole
    raw: Doc

    @classmethod
    def of(cls, name: str, raw: Any) -> Strategy:
        doc = mapping(raw)
        get = doc.get
        router = mapping(get("router"))
        return cls(name, get("deploy_type"), get("display_name"), get("vllm_args"), get("env"), get("parallel_flag"),
                   get("parallelism"), router, router.get("policy"), get("kv_offload"), get("allows_kv_offload"),
                   StrategyRole.of(get("prefill")), StrategyRole.of(get("decode")), doc)

    def role(self, name: str) -> StrategyRole:
        """The ``prefill`` / ``decode`` block (empty when the strategy has none)."""
        return self.prefill if name == "prefill" else self.decode if name == "decode" else EMPTY_ROLE

    def allows_kv_offload_options(self) -> bool:
        """Serving strategies compose with KV offload unless they own the KV connector."""
        if self.deploy_type in ("pd_cluster", "kv_store_lb"):
            return False
        return self.kv_offload is not False and self.allows_kv_offload is not False


NO_STRATEGY = Strategy.of("", {})
"""An unknown strategy name reads as an empty document."""
