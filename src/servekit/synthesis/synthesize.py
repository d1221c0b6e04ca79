"""Selection -> Plan: the one entry point that turns choices into a deployment."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from servekit.synthesis import nodes, shapes
from servekit.synthesis.args import serve_args
from servekit.synthesis.context import Context, build_context
from servekit.synthesis.docker import docker_for
from servekit.synthesis.env import serve_env
from servekit.synthesis.install import connector_steps, install_steps, min_version
from servekit.synthesis.omni import omni_process
from servekit.synthesis.plan import DOCKER_FORM, PIP_FORM, InstallStep, Plan, Process, Selection

if TYPE_CHECKING:
    from servekit.catalog.domain.kv_store import KvStore


def _process(ctx: Context, role: str, *, node: str | None = None, rank: int = 0,
             pd_role: str | None = None, port: int = 8000, meta=()) -> Process:
    args = serve_args(ctx, pd_role, node, rank if node in ("worker", "pool") else 1)
    env = serve_env(ctx, pd_role, pool_node=rank if node == "pool" else 0)
    return Process(role=role, model=ctx.model_id, args=args, env=env, rank=rank, port=port, meta=tuple(meta))


def _node_processes(ctx: Context) -> list[Process]:
    """Head plus one process per follower rank, or a single serve process."""
    if ctx.deploy_type == "multi_node" and ctx.sel.node_count > 1:
        head = _process(ctx, "head", node="head")
        workers = [_process(ctx, "worker", node="worker", rank=r) for r in range(1, ctx.sel.node_count)]
        ray_env = nodes.platform_ray_env(ctx.hw.platform, head)
        if ray_env or nodes.uses_ray(head):
            ray_env += nodes.ray_node_env(ctx.hw.platform)
            head, workers = nodes.with_env(head, ray_env), [nodes.with_env(w, ray_env) for w in workers]
            return nodes.ray_form(head, workers, shapes.master_address(ctx), ctx.hw.platform)
        return [head, *workers]
    return [_process(ctx, "serve")]


def _companions(ctx: Context) -> list[dict]:
    out = []
    features = ctx.recipe.features
    for key in ctx.sel.features:
        feature = features.get(key)
        if feature is None:
            continue
        companion = feature.companion
        if companion.command and feature.allowed_for_strategy(ctx.sel.strategy):
            out.append({"feature": key, "label": companion.label or key,
                        "description": companion.description or "",
                        "command": str(companion.command).rstrip()})
    option = ctx.kv_option
    if option is not None and option.companion.command:
        companion = option.companion
        requires = f"Requires: {option.install}" if option.install else ""
        out.append({"feature": f"kv_offload:{ctx.sel.kv_offload}", "label": companion.label or ctx.sel.kv_offload,
                    "description": " ".join(x for x in (companion.description or "", requires) if x),
                    "command": str(companion.command).rstrip()})
    return out


def _kv_passthrough(ctx: Context, store: KvStore) -> dict:
    master, store_cfg = store.master, store.store_config
    return {
        "master": {"command": master.command or "mooncake_master", "description": master.description or ""},
        "store": None if not store_cfg.declared else {
            "command": store_cfg.command, "description": store_cfg.description or "",
            "config": store_cfg.config or None, "note": store_cfg.note or ""},
        "mooncake_config": store.vllm_config_template or {},
        "mooncake_config_note": store.vllm_config_note or "",
        "install": shapes.brand_install(ctx, store.vllm_install),
    }


ROUTER_INSTALL = "uv pip install vllm-router"
ROUTER_SOURCE = "https://github.com/vllm-project/router (vllm-router on PyPI)"


def _router_install(ctx: Context) -> tuple[str, str] | None:
    """(command, source) installing the router a plan runs in front of its servers, if it runs one:
    vllm-router for prefill/decode pools, the KV store's own router (or vllm-router) in front of
    several instances."""
    if ctx.is_pd:
        return ROUTER_INSTALL, ROUTER_SOURCE
    if ctx.kv_composing and ctx.kv_instances > 1:
        store = ctx.kv_store
        if store.router_install:
            return store.router_install, f"kv_store/{ctx.sel.kv_offload}.router_install"
        return ROUTER_INSTALL, ROUTER_SOURCE
    return None


def _install(ctx: Context, image: str | None, image_source: str) -> tuple[InstallStep, ...]:
    """The plan's install steps, with the router's: it runs on a host in both forms. The pip form
    installs it into the plan's environment; the docker form has none, so a ``uv pip install``
    becomes ``uv tool install`` there (its own environment, its program on PATH)."""
    steps = install_steps(ctx, image, image_source)
    router = _router_install(ctx)
    if router is None:
        return steps
    command, source = router
    note = "the router in front of the servers"
    tool = command.replace("uv pip install ", "uv tool install ", 1) if command.startswith("uv pip install ") else command
    if tool == command:
        return (*steps, InstallStep("router", command, note, source, forms=(PIP_FORM, DOCKER_FORM)))
    return (*steps, InstallStep("router", command, note, source, forms=(PIP_FORM,)),
            InstallStep("router", tool, note, source, forms=(DOCKER_FORM,)))


def synthesize(docs, sel: Selection, *, lean: bool = False) -> Plan:
    """Build the engine-neutral Plan for a complete Selection (see ``servekit.synthesis.resolve``);
    the selection's engine is checked, and the plan translated for it, by ``servekit.app.plan``.

    ``lean`` skips install steps and the minimum version (bulk rendering: ``render_plan`` does
    not read them; ``servekit_extras`` and the text view do).
    """
    ctx = build_context(docs, sel)
    plan = _synthesize(ctx, sel, lean)
    if lean:
        return plan
    return replace(plan, install=plan.install + connector_steps((p.argv() for p in plan.processes), ctx.hw))


def _synthesize(ctx: Context, sel: Selection, lean: bool) -> Plan:
    docker = docker_for(ctx)
    version, version_sources = (None, ()) if lean else min_version(ctx)
    common = dict(selection=sel, model_id=ctx.model_id, docker=docker,
                  install=() if lean else _install(ctx, docker.image, docker.source),
                  min_version=version, min_version_sources=version_sources, notes=sel.notes)
    if ctx.is_pd:
        metas = {role: shapes.pool_meta(ctx, role) for role in ("prefill", "decode")}
        processes = tuple(
            _process(ctx, role, pd_role=role, port=port, meta=metas[role].as_reference().items())
            for role, port in (("prefill", 8001), ("decode", 8002)))
        # Pools spanning several nodes: one more command per follower node of each pool.
        processes += tuple(
            _process(ctx, f"{role}_node", node="pool", rank=n, pd_role=role, port=port)
            for role, port in (("prefill", 8001), ("decode", 8002)) for n in shapes.pd_pool_followers(ctx, role))
        router = {"command": shapes.pd_router_command(ctx, metas["prefill"], metas["decode"]),
                  "install": ROUTER_INSTALL}
        extra = {"router_config": ctx.strategy.router or {"policy": "round_robin"}}
        if ctx.kv_store is not None and ctx.kv_store.composes_with_pd:
            extra["mooncake"] = _kv_passthrough(ctx, ctx.kv_store)
        return Plan(deploy_type="pd_cluster", processes=processes, router=tuple(router.items()),
                    passthrough=tuple(extra.items()), **common)
    processes = tuple(_node_processes(ctx))
    if ctx.kv_composing:
        instances, store = ctx.kv_instances, ctx.kv_store
        router = None if instances <= 1 else {
            "command": shapes.kv_router_command(store, instances),
            "install": (_router_install(ctx) or (ROUTER_INSTALL,))[0],
            "port": store.router_port or 30080}
        extra = {"instances": instances, "serving_strategy": sel.strategy,
                 "kv_min_vllm_version": store.min_vllm_version or None, **_kv_passthrough(ctx, store)}
        return Plan(deploy_type="kv_store_lb", processes=processes, env=processes[0].env,
                    router=None if router is None else tuple(router.items()),
                    passthrough=tuple(extra.items()), **common)
    if sel.omni_task is not None:
        proc = omni_process(ctx)
        return Plan(deploy_type="single_node", processes=(proc,), env=proc.env,
                    passthrough=(("omni_task", sel.omni_task),), **{**common, "model_id": proc.model})
    companions = _companions(ctx)
    extra = {"companions": companions} if companions else {}
    if any(p.program == nodes.RAY_PROGRAM for p in processes):
        extra["ray_head_argv"] = nodes.ray_head_argv(shapes.master_address(ctx))
        platform_note = nodes.RAY_PLATFORM_NOTES.get(ctx.hw.platform)
        common["notes"] = (*sel.notes, nodes.RAY_NOTE, *((platform_note,) if platform_note else ()))
    return Plan(deploy_type=ctx.deploy_type, processes=processes, env=processes[0].env,
                passthrough=tuple(extra.items()), **common)
