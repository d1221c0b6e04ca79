"""strategies/*.yaml (serving strategies) and kv_store/*.yaml (KV-store deployments)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from servekit.catalog.schema.base import Args, Env, FreeForm, PositiveInt, Spec, VersionText

DeployType = Literal["single_node", "multi_node", "pd_cluster"]


class HardwareMatch(Spec):
    min_gpus: PositiveInt | None = None
    max_gpus: PositiveInt | None = None
    multi_node: StrictBool | None = None
    architecture: Literal["dense", "moe"] | None = None


class StrategyRole(Spec):
    """The prefill or decode side of a disaggregated strategy."""

    vllm_args: Args = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    parallelism: Literal["tp", "tep", "dep"] | None = None


class StrategyRouter(Spec):
    policy: StrictStr | None = None
    install: StrictStr | None = None
    port: PositiveInt | None = None


class Strategy(Spec):
    name: StrictStr
    deploy_type: DeployType
    display_name: StrictStr
    orientation: StrictStr | None = None
    description: StrictStr | None = None
    hardware_match: HardwareMatch | None = None
    vllm_args: Args = Field(default_factory=list)
    parallel_flag: StrictStr | None = None
    parallelism: Literal["tp_pp", "tp_dp"] | None = None
    """Multi-node layout: TP in a node with PP (``tp_pp``) or DP (``tp_dp``) across nodes."""
    env: Env = Field(default_factory=dict)
    prefill: StrategyRole | None = None
    decode: StrategyRole | None = None
    router: StrategyRouter | None = None


class KvStoreVllm(Spec):
    """What each vLLM instance adds while the KV store is active."""

    vllm_args: Args = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    install: dict[str, StrictStr] = Field(default_factory=dict)
    """Brand-keyed (lower case) pip dependency."""
    port: PositiveInt | None = None


class KvStorePdRole(Spec):
    args: Args = Field(default_factory=list)


class KvStorePd(Spec):
    """How the store composes with a prefill/decode cluster."""

    prefill: KvStorePdRole | None = None
    decode: KvStorePdRole | None = None


class KvStoreProcess(Spec):
    command: StrictStr
    description: StrictStr | None = None
    note: StrictStr | None = None
    config: FreeForm | None = None


class MooncakeVllmConfig(Spec):
    mode: StrictStr
    note: StrictStr | None = None
    template: FreeForm = Field(default_factory=dict)


class KvStore(Spec):
    name: StrictStr
    deploy_type: Literal["kv_store_lb"]
    display_name: StrictStr
    label: StrictStr | None = None
    order: StrictInt | None = None
    description: StrictStr | None = None
    router: StrategyRouter | None = None
    vllm: KvStoreVllm | None = None
    pd: KvStorePd | None = None
    mooncake_master: KvStoreProcess | None = None
    mooncake_store_config: KvStoreProcess | None = None
    mooncake_vllm_config: MooncakeVllmConfig | None = None
    min_vllm_version: VersionText | None = None
    default_instances: PositiveInt = 1
