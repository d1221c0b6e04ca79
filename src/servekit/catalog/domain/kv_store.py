"""A KV-store deployment (``kv_store/*.yaml``, e.g. Mooncake) as synthesis reads it: what each
vLLM instance adds, the router in front of the instances and the store's own processes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.values import Doc, mapping

PD_ROLES = ("prefill", "decode")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class KvProcess:
    """``mooncake_master`` / ``mooncake_store_config``: a process run beside the vLLM instances.
    ``declared`` is False when the deployment has none (absent, null or empty)."""

    command: Any
    description: Any
    note: Any
    config: Any
    declared: bool

    @classmethod
    def of(cls, raw: Any) -> KvProcess:
        doc = mapping(raw)
        get = doc.get
        return cls(get("command"), get("description"), get("note"), get("config"), bool(doc))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class KvStore:
    """One KV-store deployment; values stay as written (None when absent).

    ``vllm_*`` come from its ``vllm`` block (what every instance adds), ``router_*`` from
    ``router``, ``vllm_config_*`` from ``mooncake_vllm_config``; ``pd_args`` holds
    ``pd.<role>.args`` and ``composes_with_pd`` says whether a ``pd`` block is declared.
    """

    name: str
    deploy_type: Any
    router_policy: Any
    router_install: Any
    router_port: Any
    vllm_args: Any
    vllm_env: Any
    vllm_install: Any
    """A pip dependency: one command, or a map keyed by lower-case GPU brand."""
    vllm_port: Any
    composes_with_pd: bool
    pd_args: dict[str, Any]
    master: KvProcess
    store_config: KvProcess
    vllm_config_template: Any
    vllm_config_note: Any
    min_vllm_version: Any
    default_instances: Any
    raw: Doc

    @classmethod
    def of(cls, name: str, raw: Any) -> KvStore:
        doc = mapping(raw)
        get = doc.get
        router, vllm, pd = mapping(get("router")), mapping(get("vllm")), mapping(get("pd"))
        vllm_config = mapping(get("mooncake_vllm_config"))
        return cls(
            name, get("deploy_type"), router.get("policy"), router.get("install"), router.get("port"),
            vllm.get("vllm_args"), vllm.get("env"), vllm.get("install"), vllm.get("port"), bool(pd),
            {role: mapping(pd.get(role)).get("args") for role in PD_ROLES},
            KvProcess.of(get("mooncake_master")), KvProcess.of(get("mooncake_store_config")),
            vllm_config.get("template"), vllm_config.get("note"), get("min_vllm_version"),
            get("default_instances"), doc,
        )

    def role_args(self, role: str | None) -> Any:
        """``pd.<role>.args`` (None for another role or an absent block)."""
        return self.pd_args.get(role) if role else None
