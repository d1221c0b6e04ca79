"""A recipe's per-strategy tweaks (``strategy_overrides.<strategy>``), PD pool shapes included."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servekit.catalog.domain.hardware_block import HardwareBlock, block_map
from servekit.catalog.domain.values import Doc, mapping


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RoleOverride:
    """``strategy_overrides.pd_cluster.<prefill|decode>``: one PD pool's shape and extras."""

    parallelism: Any
    tp: Any
    parallel_flag: Any
    vllm_args: Any
    extra_args: Any
    env: Any
    hardware_overrides: dict[str, Any]
    raw: Doc

    @classmethod
    def of(cls, raw: Any) -> RoleOverride:
        doc = mapping(raw)
        get = doc.get
        return cls(get("parallelism"), get("tp"), get("parallel_flag"), get("vllm_args"), get("extra_args"),
                   get("env"), block_map(get("hardware_overrides")), doc)

    def exact_block(self, hw_id: str) -> HardwareBlock | None:
        block = self.hardware_overrides.get(hw_id)
        return block if isinstance(block, HardwareBlock) else None


EMPTY_ROLE_OVERRIDE = RoleOverride.of({})


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StrategyOverride:
    """One strategy's overrides; ``declared`` is False when the recipe has none for it."""

    tp: Any
    extra_args: Any
    extra_env: Any
    vllm_args: Any
    env: Any
    hardware_overrides: dict[str, Any]
    prefill: RoleOverride
    decode: RoleOverride
    pool_modes: Any
    intra_node_data_parallel_size: Any
    declared: bool
    raw: Doc

    @classmethod
    def of(cls, raw: Any) -> StrategyOverride:
        doc = mapping(raw)
        get = doc.get
        return cls(get("tp"), get("extra_args"), get("extra_env"), get("vllm_args"), get("env"),
                   block_map(get("hardware_overrides")), RoleOverride.of(get("prefill")),
                   RoleOverride.of(get("decode")), get("pool_modes"),
                   mapping(get("router")).get("intra_node_data_parallel_size"), bool(doc), doc)

    def role(self, name: str) -> RoleOverride:
        return self.prefill if name == "prefill" else self.decode if name == "decode" else EMPTY_ROLE_OVERRIDE


NO_OVERRIDE = StrategyOverride.of({})
