"""The serve command's arguments, layered in a fixed order with last-wins dedupe.

Order: model base args; variant args (and the variant's exact-hardware args); strategy args
with the parallel layout; per-strategy overrides; hardware overrides; features (each mode's or
hardware override's args); the composing KV-offload option; a Mooncake connector. Every
token keeps the catalog key it came from, so a plan can say why each flag is there.
"""

from __future__ import annotations

from typing import Any

from servekit.catalog.domain import HardwareBlock, block_or_empty
from servekit.catalog.spaced_args import split_spaced_flag
from servekit.synthesis import shapes
from servekit.synthesis.context import Context
from servekit.synthesis.hardware import exact_key, layered_key, pick_generation_key
from servekit.synthesis.plan import Arg

Chunk = tuple[list[Any], str]


def _is_flag(token: Any) -> bool:
    return type(token) is str and token[:1] == "-"


def _truthy(token: Any) -> bool:
    """Empty strings, null, false and zero are dropped from argument lists."""
    if type(token) is str:
        return token != ""
    return token is not None and token is not False and not (isinstance(token, (int, float)) and token == 0)


def dedupe(chunks: list[Chunk]) -> tuple[Arg, ...]:
    """Pair each flag with its value, then keep only the last occurrence of every flag.

    One item holding a flag and its value (``"--max-model-len auto"``) is read as the two."""
    tokens = [(part, src) for ts, src in chunks if ts for t in ts if (t != "" if type(t) is str else _truthy(t))
              for part in (split_spaced_flag(t) or (t,))]
    units: list[tuple[Any, Any, str]] = []
    i, count = 0, len(tokens)
    while i < count:
        token, src = tokens[i]
        if _is_flag(token):
            if i + 1 < count and not _is_flag(tokens[i + 1][0]):
                units.append((token, tokens[i + 1][0], src))
                i += 2
                continue
            units.append((token, None, src))
        else:
            units.append((None, token, src))
        i += 1
    last = {flag: n for n, (flag, _, _) in enumerate(units) if flag is not None}
    return tuple(Arg(flag, value, src) for n, (flag, value, src) in enumerate(units)
                 if flag is None or last[flag] == n)


def hardware_layers(ctx: Context, role: str | None, field: str) -> list[tuple[Any, str]]:
    """(value, key path) of ``field`` (extra_args / extra_env) in each hardware-override block."""
    return [(block.field(field), f"{path}.{field}") for block, path in _override_blocks(ctx, role)]


def _override_blocks(ctx: Context, role: str | None) -> list[tuple[HardwareBlock, str]]:
    """Hardware-override blocks that apply, in order, with their key paths.

    A per-strategy generation override replaces the recipe and variant generation blocks;
    exact-GPU strategy and role blocks are added last.
    """
    memo_key = ("override_blocks", role)
    if memo_key in ctx.memo:
        return ctx.memo[memo_key]
    so, hw, gen, nvidia = ctx.strategy_overrides, ctx.sel.hardware, ctx.gen, ctx.nvidia
    so_ho = so.hardware_overrides
    out: list[tuple[object, str]] = []
    key = pick_generation_key(so_ho, gen, nvidia)
    if key:
        out.append((so_ho[key], f"{ctx.so_path}.hardware_overrides.{key}"))
    else:
        for overrides, path in ((ctx.recipe.hardware_overrides, "hardware_overrides"),
                                (ctx.variant.hardware_overrides, f"{ctx.variant_path}.hardware_overrides")):
            key = pick_generation_key(overrides, gen, nvidia)
            if key:
                out.append((overrides[key], f"{path}.{key}"))
    if exact_key(so_ho, hw):
        out.append((so_ho[hw], f"{ctx.so_path}.hardware_overrides.{hw}"))
    role_ho = so.role(role).hardware_overrides if role else {}
    if exact_key(role_ho, hw):
        out.append((role_ho[hw], f"{ctx.so_path}.{role}.hardware_overrides.{hw}"))
    out = [(block_or_empty(block), path) for block, path in out]
    ctx.memo[memo_key] = out
    return out


def feature_blocks(ctx: Context, field: str) -> list[tuple[Any, str]]:
    """Each enabled feature's ``args`` / ``env``: the mode's, or a hardware override's."""
    key = ("feature_blocks", field)
    if key not in ctx.memo:
        ctx.memo[key] = _compute_feature_blocks(ctx, field)
    return ctx.memo[key]


def _compute_feature_blocks(ctx: Context, field: str) -> list[tuple[Any, str]]:
    out: list[tuple[Any, str]] = []
    for key, feature, mode in ctx.enabled_features():
        base, path = (feature.modes[mode], f"features.{key}.modes.{mode}") if mode else (
            feature, f"features.{key}")
        overrides = base.hardware_overrides
        hw_key = layered_key(overrides, ctx.profile, ctx.sel.hardware)
        block = overrides[hw_key] if hw_key else None
        if isinstance(block, HardwareBlock) and block.field(field) is not None:
            out.append((block.field(field), f"{path}.hardware_overrides.{hw_key}.{field}"))
        else:
            out.append((base.args if field == "args" else base.env, f"{path}.{field}"))
    return out


def serve_chunks(ctx: Context, role: str | None = None, node: str | None = None, rank: int = 1) -> list[Chunk]:
    """Every argument source for one process, in layer order, before dedupe.

    ``role`` is ``prefill``/``decode`` for PD pools; ``node`` is ``head``/``worker`` for a
    multi-node deployment (``rank`` = which follower).
    """
    key = ("layers", role)
    if key not in ctx.memo:
        ctx.memo[key] = (_leading_chunks(ctx, role), _trailing_chunks(ctx, role))
    leading, trailing = ctx.memo[key]
    return [*leading, *_placement_chunks(ctx, role, node, rank), *trailing]


def _leading_chunks(ctx: Context, role: str | None) -> list[Chunk]:
    """Model, variant and strategy arguments: everything before the parallel layout."""
    variant, hw = ctx.variant, ctx.sel.hardware
    chunks: list[Chunk] = [(ctx.recipe.model.base_args, "model.base_args"),
                           (variant.extra_args, f"{ctx.variant_path}.extra_args")]
    exact = variant.exact_block(hw)
    if exact is not None:
        chunks.append((exact.extra_args, f"{ctx.variant_path}.hardware_overrides.{hw}.extra_args"))
    if not ctx.is_pd:
        chunks.append((ctx.strategy.vllm_args, f"{ctx.strategy_path}.vllm_args"))
    elif role:
        chunks.append((ctx.strategy.role(role).vllm_args, f"{ctx.strategy_path}.{role}.vllm_args"))
    return chunks


def _placement_chunks(ctx: Context, role: str | None, node: str | None, rank: int) -> list[Chunk]:
    """The parallel layout of this one process (size, rendezvous, rank); a layout fit chose
    says so in its provenance."""
    if ctx.deploy_type == "multi_node" and ctx.sel.node_count > 1:
        chunks = shapes.multi_node_args(ctx, node == "worker", rank)
    elif ctx.is_pd:
        return shapes.pd_role_args(ctx, role or "prefill", rank if node == "pool" else 0)
    else:
        size, source = shapes.single_node_size(ctx)
        chunks = [([ctx.strategy.parallel_flag or "--tensor-parallel-size", str(size)], source)]
    return [(tokens, shapes.FIT_SOURCE) for tokens, _ in chunks] if ctx.sel.layout_by_fit else chunks


def _trailing_chunks(ctx: Context, role: str | None) -> list[Chunk]:
    """Overrides, features and KV connectors: everything after the parallel layout."""
    so = ctx.strategy_overrides
    chunks: list[Chunk] = []
    if so.declared:
        block, path = (so.role(role), f"{ctx.so_path}.{role}") if role else (so, ctx.so_path)
        chunks.append((block.extra_args, f"{path}.extra_args"))
        chunks.append((block.vllm_args, f"{path}.vllm_args"))
    chunks += hardware_layers(ctx, role, "extra_args")
    chunks += feature_blocks(ctx, "args")
    if ctx.kv_option is not None:
        chunks.append((ctx.kv_option.args, f"taxonomy.kv_offload.{ctx.sel.kv_offload}.args"))
    if ctx.kv_composing:
        chunks.append((ctx.kv_store.vllm_args, f"kv_store/{ctx.sel.kv_offload}.vllm.vllm_args"))
    if ctx.is_pd and role and ctx.kv_store is not None:
        chunks.append((ctx.kv_store.role_args(role), f"kv_store/{ctx.sel.kv_offload}.pd.{role}.args"))
    return chunks


def serve_args(ctx: Context, role: str | None = None, node: str | None = None, rank: int = 1) -> tuple[Arg, ...]:
    return dedupe(serve_chunks(ctx, role, node, rank))
