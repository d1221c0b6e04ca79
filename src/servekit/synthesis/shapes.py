"""Deploy shapes: how a strategy lays processes over nodes and which flags say so.

Single node (one ``vllm serve`` sized by TP rules), multi node (a head plus one follower per
rank, over the mp backend or DP rendezvous), PD cluster (prefill and decode pools plus a
router), and the Mooncake kv-store shell that wraps any non-PD serving strategy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servekit.catalog.domain import RoleOverride, StrategyRole, block_or_empty
from servekit.records import record
from servekit.synthesis import selection as rules
from servekit.synthesis.context import Context
from servekit.synthesis.hardware import generation_key, layered_key
from servekit.synthesis.nodes import placement

if TYPE_CHECKING:
    from servekit.catalog.domain.kv_store import KvStore

KV_INSTALL_PLATFORMS = ("cuda", "rocm")
"""Platforms a brand-keyed kv-store install serves (under the profile's ``image_key``)."""
Chunk = tuple[list[Any], str]
"""Tokens plus the catalog key that produced them."""
FIT_SOURCE = "fit: the smallest layout of the recipe's strategies that fits this hardware's memory"
"""Provenance of the parallel layout when servekit's fit check chose it (``Selection.layout_by_fit``)."""


def _positive_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def single_node_size(ctx: Context) -> tuple[int, str]:
    """Parallel size of a single-node strategy and the key that decided it.

    single_node_tp: the size fit chose (``Selection.tp``) > variant ``tp`` >
    ``strategy_overrides.single_node_tp.tp`` > auto-fit (TP1 when the variant fits one GPU, else
    the whole node). Others use the whole node.
    """
    gpus, is_cpu = ctx.gpus, ctx.hw.kind == "cpu"
    if ctx.sel.strategy != "single_node_tp":
        return gpus, f"taxonomy.hardware_profiles.{ctx.sel.hardware}.gpu_count"
    if ctx.sel.tp is not None:
        return ctx.sel.tp, FIT_SOURCE
    declared = [(ctx.variant.tp, f"{ctx.variant_path}.tp"),
                (ctx.strategy_overrides.tp, f"{ctx.so_path}.tp")]
    for raw, path in declared:
        key = None
        if not (isinstance(raw, (int, float)) and not isinstance(raw, bool)):
            key = layered_key(raw, ctx.profile, ctx.sel.hardware)
            raw = raw[key] if key is not None else None
        if _positive_number(raw):
            size = int(raw) if is_cpu else int(min(raw, gpus))
            return size, f"{path}.{key}" if key else path
    per_gpu = ctx.hw.memory_gb
    need = rules.variant_vram_minimum_gb(ctx.variant, ctx.sel.hardware)
    if not need or not per_gpu or per_gpu <= 0:
        return gpus, f"taxonomy.hardware_profiles.{ctx.sel.hardware}.gpu_count"
    return (1 if need <= per_gpu else gpus), f"{ctx.variant_path}.vram_minimum_gb"


def _dep_local_size(ctx: Context) -> int:
    so = ctx.strategy_overrides
    overrides = so.hardware_overrides
    gen_key = generation_key(overrides, ctx.profile)
    tokens = [*(so.vllm_args or []), *(so.extra_args or []),
              *(block_or_empty(overrides.get(gen_key)).extra_args or [] if gen_key else []),
              *(block_or_empty(overrides.get(ctx.sel.hardware)).extra_args or [])]
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i] == "--data-parallel-size-local" and i + 1 < len(tokens):
            return int(tokens[i + 1])
    return ctx.gpus


def master_address(ctx: Context) -> str:
    return "$VLLM_INSTANCE_1" if ctx.kv_composing and ctx.kv_instances > 1 else "$HEAD_IP"


def multi_node_args(ctx: Context, worker: bool, rank: int) -> list[Chunk]:
    """Flags that place one node of a multi-node deployment (head when not ``worker``)."""
    nodes, gpus, strat = ctx.sel.node_count, ctx.gpus, ctx.strategy
    mp_rank = max(1, rank) if worker else 0
    size_src, place_src = f"{ctx.strategy_path}.parallel_flag", f"{ctx.strategy_path}.deploy_type"
    addr = master_address(ctx)
    flag = strat.parallel_flag or "--tensor-parallel-size"
    if flag == "--data-parallel-size":
        out = [(["--data-parallel-size", str(gpus * nodes), "--data-parallel-size-local", str(gpus)], size_src),
               (["--data-parallel-address", addr], place_src)]
        if worker:
            out.append((["--data-parallel-start-rank", str(mp_rank * _dep_local_size(ctx))], place_src))
        return out
    parallelism = strat.parallelism
    if parallelism == "tp_dp":
        out = [(["--tensor-parallel-size", str(gpus), "--data-parallel-size", str(nodes),
                 "--data-parallel-size-local", "1"], f"{ctx.strategy_path}.parallelism"),
               (["--data-parallel-address", addr], place_src)]
        if worker:
            out.append((["--data-parallel-start-rank", str(mp_rank)], place_src))
        return out
    if parallelism == "tp_pp":
        sizes = (["--tensor-parallel-size", str(gpus), "--pipeline-parallel-size", str(nodes)],
                 f"{ctx.strategy_path}.parallelism")
    else:
        sizes = (["--tensor-parallel-size", str(gpus * nodes)], size_src)
    return [sizes, (placement(nodes, mp_rank, addr), place_src)]


@record
class PoolMeta:
    """One PD pool: nodes (0 = half of a shared node), parallelism and its sizes."""

    nodes: int
    parallelism: str
    tp: int
    dp_local: int
    dp_size: int
    pool_gpus: int
    current_node: int
    start_rank: int

    def as_reference(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "parallelism": self.parallelism, "tp": self.tp,
                "dpLocal": self.dp_local, "dpSize": self.dp_size, "poolGpus": self.pool_gpus,
                "currentNode": self.current_node, "startRank": self.start_rank}


def _role_config(ctx: Context, role: str) -> tuple[RoleOverride, StrategyRole]:
    return ctx.strategy_overrides.role(role), ctx.strategy.role(role)


def pool_nodes(ctx: Context, role: str) -> int:
    chosen = (ctx.sel.pd_node_map or {}).get(role)
    if isinstance(chosen, int):
        return chosen
    return 1 if ctx.sel.node_count > 1 else 0


def pool_meta(ctx: Context, role: str) -> PoolMeta:
    so_role, role_cfg = _role_config(ctx, role)
    nodes = pool_nodes(ctx, role)
    parallelism = so_role.parallelism or role_cfg.parallelism or "tp"
    pool_gpus = ctx.gpus // 2 if nodes == 0 else nodes * ctx.gpus
    tp = (so_role.tp or role_cfg.tp or 1) if parallelism == "dep" else pool_gpus
    dp_local = max(1, ctx.gpus // tp) if parallelism == "dep" else 0
    dp_size = max(1, nodes) * dp_local if parallelism == "dep" else 1
    return PoolMeta(nodes, parallelism, tp, dp_local, dp_size, pool_gpus, 0, 0)


def pd_role_args(ctx: Context, role: str, node: int = 0) -> list[Chunk]:
    """Flags that size one PD pool, for node ``node`` of it (0 = the pool's head)."""
    so_role, role_cfg = _role_config(ctx, role)
    nodes = pool_nodes(ctx, role)
    pool_gpus = ctx.gpus // 2 if nodes == 0 else nodes * ctx.gpus
    parallelism = so_role.parallelism or role_cfg.parallelism or "tp"
    src = f"{ctx.strategy_path}.{role}.parallelism"
    allowed = rules.pd_pool_modes(ctx.recipe)
    if parallelism not in allowed:
        parallelism = allowed[0]
    head = f"${role.upper()}_NODE_1"
    if parallelism == "dep":
        explicit_tp = so_role.tp if so_role.tp is not None else role_cfg.tp
        role_tp = explicit_tp if explicit_tp is not None else 1
        dp_local = max(1, ctx.gpus // role_tp)
        in_pool = max(1, nodes)
        node = max(0, min(in_pool - 1, node))
        tokens: list[Any] = [] if explicit_tp is None else ["--tensor-parallel-size", str(role_tp)]
        tokens += ["--data-parallel-size", str(in_pool * dp_local), "--data-parallel-size-local", str(dp_local),
                   "--data-parallel-start-rank", str(node * dp_local), "--data-parallel-address", head,
                   "--data-parallel-rpc-port", f"${role.upper()}_DP_RPC_PORT"]
        if in_pool > 1:
            tokens.append("--data-parallel-hybrid-lb")
        return [(tokens + ["--enable-expert-parallel"], src)]
    flag = so_role.parallel_flag or role_cfg.parallel_flag or ctx.strategy.parallel_flag or "--tensor-parallel-size"
    tokens = [flag, str(max(1, pool_gpus))]
    if parallelism == "tep":
        tokens.append("--enable-expert-parallel")
    if nodes > 1:
        node = max(0, min(nodes - 1, node))
        tokens += placement(nodes, node, head)
    return [(tokens, src)]


def pd_pool_followers(ctx: Context, role: str) -> range:
    """Node indexes 1.. of a PD pool that spans several nodes (each runs its own command)."""
    return range(1, pool_nodes(ctx, role)) if pool_nodes(ctx, role) > 1 else range(0)


def pd_pool_parallelism(ctx: Context, role: str) -> str:
    so_role, role_cfg = _role_config(ctx, role)
    parallelism = so_role.parallelism or role_cfg.parallelism or "tp"
    allowed = rules.pd_pool_modes(ctx.recipe)
    return parallelism if parallelism in allowed else allowed[0]


def pd_router_command(ctx: Context, prefill: PoolMeta, decode: PoolMeta) -> str:
    policy = ctx.strategy.router_policy or "round_robin"

    def endpoints(meta: PoolMeta, role: str, port: int) -> list[str]:
        count = max(1, meta.nodes or 1) if meta.parallelism == "dep" else 1
        return [f"    --{role} http://${role.upper()}_NODE_{i + 1}:{port} \\" for i in range(count)]

    intra = ctx.strategy_overrides.intra_node_data_parallel_size
    if intra is None:
        intra = max(prefill.dp_local or 0, decode.dp_local or 0, 1)
    lines = [f"vllm-router --policy {policy} \\", "    --vllm-pd-disaggregation \\",
             *endpoints(prefill, "prefill", 8001), *endpoints(decode, "decode", 8002),
             "    --host $ROUTER_HOST \\", "    --port $ROUTER_PORT \\",
             f"    --intra-node-data-parallel-size {intra}"]
    return "\n".join(lines)


def kv_router_command(kv_store: KvStore, instances: int) -> str:
    port = kv_store.vllm_port or 8000
    lines = [f"vllm-router --policy {kv_store.router_policy or 'cache_aware'} \\",
             *[f"    --backend-url http://$VLLM_INSTANCE_{i + 1}:{port} \\" for i in range(instances)],
             "    --host $ROUTER_HOST \\", "    --port $ROUTER_PORT \\", "    --cache-threshold 0.5 \\",
             "    --balance-abs-threshold 4 \\", "    --balance-rel-threshold 1.1"]
    return "\n".join(lines)


def brand_install(ctx: Context, raw: Any) -> str | None:
    """A kv-store install that may be keyed by GPU brand ({nvidia, amd}); other platforms get none."""
    if isinstance(raw, dict):
        key = ctx.hw.image_key if ctx.hw.platform in KV_INSTALL_PLATFORMS else None
        return (raw.get(key) or None) if key else None
    return raw or None
