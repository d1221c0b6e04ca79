"""The serve process's environment, layered like its arguments (later layers win)."""

from __future__ import annotations

from typing import Any

from servekit.synthesis import shapes
from servekit.synthesis.args import hardware_layers, feature_blocks
from servekit.synthesis.context import Context
from servekit.synthesis.plan import EnvVar

NVL4_ONLY_ENV = ("VLLM_USE_NCCL_SYMM_MEM", "NCCL_CUMEM_ENABLE", "NCCL_MNNVL_ENABLE",
                 "NCCL_NVLS_ENABLE", "UCX_NET_DEVICES")
"""NCCL/UCX settings tuned for NVL4 trays (GB200/GB300, ``interconnect: nvl4``); dropped from PD
roles elsewhere."""

MACHINE_ENV = ("VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND")
"""Settings whose right value depends on the machine a process runs on (its memory, its cores):
a script keeps the value that machine's environment already gives them (``${NAME:-value}``)."""


class EnvLayers:
    """An environment built layer by layer; each variable remembers the key that set it last."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def merge(self, block: Any, source: str) -> None:
        if not isinstance(block, dict):
            return
        for name, value in block.items():
            self.values[name] = value
            self.sources[name] = source

    def set(self, name: str, value: Any, source: str) -> None:
        self.merge({name: value}, source)

    def result(self) -> tuple[EnvVar, ...]:
        return tuple(EnvVar(k, v, self.sources[k]) for k, v in self.values.items())


def serve_env(ctx: Context, role: str | None = None, *, feature_env: bool = True,
              pool_node: int = 0) -> tuple[EnvVar, ...]:
    """Environment of one serve process (``role`` = prefill/decode for PD pools).

    ``feature_env`` adds enabled features' ``env`` blocks (a documented launch line such as
    long context needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 beside its flags).
    """
    key = ("env", role, feature_env, pool_node)
    if key not in ctx.memo:
        ctx.memo[key] = _layered_env(ctx, role, feature_env, pool_node)
    return ctx.memo[key]


def _layered_env(ctx: Context, role: str | None, feature_env: bool, pool_node: int) -> tuple[EnvVar, ...]:
    env, so, hw = EnvLayers(), ctx.strategy_overrides, ctx.sel.hardware
    env.merge(ctx.recipe.model.base_env, "model.base_env")
    env.merge(ctx.variant.extra_env, f"{ctx.variant_path}.extra_env")
    exact = ctx.variant.exact_block(hw)
    if exact is not None:
        env.merge(exact.extra_env, f"{ctx.variant_path}.hardware_overrides.{hw}.extra_env")
    if not ctx.is_pd:
        env.merge(ctx.strategy.env, f"{ctx.strategy_path}.env")
    elif role:
        env.merge(ctx.strategy.role(role).env, f"{ctx.strategy_path}.{role}.env")
    if ctx.kv_option is not None:
        env.merge(ctx.kv_option.env, f"taxonomy.kv_offload.{ctx.sel.kv_offload}.env")
    if ctx.kv_store is not None and (ctx.kv_composing or (ctx.is_pd and role and ctx.kv_store.composes_with_pd)):
        env.merge(ctx.kv_store.vllm_env, f"kv_store/{ctx.sel.kv_offload}.vllm.env")
    if ctx.is_pd and role:
        _pin_devices(ctx, env, role)
    if so.declared:
        env.merge(so.env, f"{ctx.so_path}.env")
        if role:
            env.merge(so.role(role).env, f"{ctx.so_path}.{role}.env")
        else:
            env.merge(so.extra_env, f"{ctx.so_path}.extra_env")
    for block, source in hardware_layers(ctx, role, "extra_env"):
        env.merge(block, source)
    if feature_env:
        for block, source in feature_blocks(ctx, "env"):
            env.merge(block, source)
    if ctx.is_pd and not ctx.hw.nvl4:
        for name in NVL4_ONLY_ENV:
            env.values.pop(name, None)
    if ctx.is_pd and role and pool_node > 0 and shapes.pd_pool_parallelism(ctx, role) == "dep":
        # A DEP pool runs one server per node: its per-node bind host is that node's own.
        head, own = f"${role.upper()}_NODE_1", f"${role.upper()}_NODE_{pool_node + 1}"
        for name, value in list(env.values.items()):
            if value == head:
                env.values[name] = own
    return env.result()


def _pin_devices(ctx: Context, env: EnvLayers, role: str) -> None:
    """PD roles own whole nodes, or (co-located) one half of a shared node each."""
    nodes = shapes.pool_nodes(ctx, role)
    gpus = ctx.gpus
    source = f"{ctx.strategy_path}.{role} (pool placement)"
    if nodes >= 1:
        env.set("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(gpus)), source)
        if nodes >= 2:
            env.set("GLOO_SOCKET_IFNAME", "$IFACE_NAME", source)
            env.set("NCCL_SOCKET_IFNAME", "$IFACE_NAME", source)
        return
    half = gpus // 2
    if half > 0:
        ids = range(half) if role == "prefill" else range(half, gpus)
        env.set("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in ids), source)
