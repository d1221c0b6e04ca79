"""PD clusters: co-located halves, multi-node pools with one command per node, and the router."""

from __future__ import annotations

from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import resolve_selection
from servekit.synthesis.synthesize import synthesize


def test_colocated_pool_splits_the_node(reference_docs):
    sel = resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", hardware="b300", strategy="pd_cluster",
                            pd_nodes=None)
    out = render_plan(synthesize(reference_docs, sel))
    assert out["prefill"]["env"]["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert out["decode"]["env"]["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"
    # the halves exchange KV over the engines' side channels: both on the host network, no -p;
    # each serves on its own port (--port 8001 / 8002 in its command)
    for role, port in (("prefill", "8001"), ("decode", "8002")):
        argv = out[role]["docker_argv"]
        assert "--network" in argv and "-p" not in argv and argv[argv.index("--port") + 1] == port


def test_multi_node_pools_have_a_command_per_node(reference_docs):
    sel = resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", hardware="h100", strategy="pd_cluster")
    assert sel.pd_node_map == {"prefill": 2, "decode": 2}  # sized from the variant's VRAM floor
    plan = synthesize(reference_docs, sel)
    follower = plan.role("prefill_node")[0]
    argv, env = follower.argv(), follower.env_map()
    head = plan.role("prefill")[0].argv()
    if "--data-parallel-start-rank" in argv:  # DEP pool: one server per node, own bind host
        dp_local = head[head.index("--data-parallel-size-local") + 1]
        assert argv[argv.index("--data-parallel-start-rank") + 1] == dp_local
        assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"] == "$PREFILL_NODE_2"
    else:  # TP pool: followers run headless
        assert "--headless" in argv and argv[argv.index("--node-rank") + 1] == "1"
    router = render_plan(plan)["router"]["command"]
    assert "--vllm-pd-disaggregation" in router and "$DECODE_NODE_1:8002" in router


def test_the_router_is_installed_in_both_forms(reference_docs):
    """The router runs on a host in both forms: the pip form puts it in the plan's environment,
    the docker form (no environment of its own) installs it as a uv tool with its program on PATH."""
    sel = resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", hardware="b300", strategy="pd_cluster",
                            pd_nodes=None)
    plan = synthesize(reference_docs, sel)
    routers = [s for s in plan.install if s.kind == "router"]
    assert [(s.command, s.runs_in(False), s.runs_in(True)) for s in routers] == [
        ("uv pip install vllm-router", True, False), ("uv tool install vllm-router", False, True)]
    assert render_plan(plan)["router"]["install"] == "uv pip install vllm-router"  # the public API shape
    plain = synthesize(reference_docs, resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", hardware="b300"))
    assert not [s for s in plain.install if s.kind == "router"]  # no router, nothing to install


def test_the_nixl_connector_library_is_installed_in_the_pip_form(reference_docs):
    """vLLM's wheels leave NIXL out (its docs: `uv pip install nixl` on NVIDIA; built from source
    elsewhere); its images carry it, so the docker form installs nothing for it."""
    for hardware, expected in (("b300", "uv pip install nixl"), ("mi300x", "# NixlConnector's library has no wheel")):
        sel = resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", hardware=hardware, strategy="pd_cluster",
                                pd_nodes=None)
        plan = synthesize(reference_docs, sel)
        assert '"kv_connector":"NixlConnector"' in " ".join(str(w) for w in plan.processes[0].argv())
        steps = [s for s in plan.install if s.kind == "kv_connector"]
        assert len(steps) == 1 and steps[0].command.startswith(expected)
        assert steps[0].runs_in(False) and not steps[0].runs_in(True)
    plain = synthesize(reference_docs, resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", hardware="b300"))
    assert not [s for s in plain.install if s.kind == "kv_connector"]
