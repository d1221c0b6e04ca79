"""A recipe's per-strategy tweaks (``strategy_overrides``), including PD pool shapes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictStr

from servekit.catalog.schema.base import Args, Env, PositiveInt, Spec
from servekit.catalog.schema.variant import HardwareOverride

PoolParallelism = Literal["tp", "tep", "dep"]
NodeCount = PositiveInt | dict[str, PositiveInt]


class PdRoleOverride(Spec):
    """Shape of the prefill or decode pool of a ``pd_cluster`` deployment."""

    nodes: NodeCount | None = None
    parallelism: PoolParallelism | None = None
    tp: PositiveInt | None = None
    vllm_args: Args = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    hardware_overrides: dict[str, HardwareOverride] = Field(default_factory=dict)
    parallel_flag: StrictStr | None = None


class RouterOverride(Spec):
    intra_node_data_parallel_size: PositiveInt | None = None


class StrategyOverride(Spec):
    tp: PositiveInt | dict[str, PositiveInt] | None = None
    """TP width cap (single_node_tp), optionally per hardware key."""
    extra_args: Args = Field(default_factory=list)
    extra_env: Env = Field(default_factory=dict)
    vllm_args: Args = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    hardware_overrides: dict[str, HardwareOverride] = Field(default_factory=dict)
    prefill: PdRoleOverride | None = None
    decode: PdRoleOverride | None = None
    pool_modes: list[PoolParallelism] = Field(default_factory=list)
    router: RouterOverride | None = None
