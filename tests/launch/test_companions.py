"""Companion programs: the pinned registry, and the companions and router a recipe's plan carries
(LMCache server, Mooncake master, the KV-store router) as processes of the launch plan."""

from __future__ import annotations

import pytest

from servekit.app.plan import plan as make_plan
from servekit.app.request import PlanRequest
from servekit.cli.app import main
from servekit.engines.companions import program_of
from servekit.engines.install_specs import parse_requirement
from servekit.errors import ServekitError
from servekit.launch.launch_plan import COMPANION, ENGINE, ROUTER, plan_from_dict
from servekit.launch.recipe_plan import launch_plan_of
from servekit.launch.wiring import further_nodes, wire

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _launch(kv_offload: str):
    result = make_plan(PlanRequest(MODEL, hardware="h100", kv_offload=kv_offload, checks=False))
    return launch_plan_of(result.plan, result.commands)


def test_the_router_is_pinned_and_found_by_its_command_word():
    spec = parse_requirement("vllm-router==0.1.17")
    assert (spec.dist, spec.version, spec.import_name) == ("vllm-router", "0.1.17", "vllm_router")
    assert spec.steps == (("vllm-router==0.1.17",),)
    assert parse_requirement("vllm-router").requirement == "vllm-router==0.1.17"
    assert parse_requirement("mooncake_master").dist == "mooncake-transfer-engine"
    assert program_of("/some/venv/bin/vllm-router").readiness_path == "/readiness"
    assert program_of("lmcache").port_option == "--port"
    with pytest.raises(ServekitError, match="no local install recipe for engine package 'nginx'") as raised:
        parse_requirement("nginx==1.0")
    assert "vllm-router==0.1.17" not in str(raised.value) and "vllm-router" in raised.value.fix


def test_engine_commands_take_a_companion_requirement(tmp_path, monkeypatch, capsys):
    """The engine commands read a companion's requirement like an engine's: in an empty engines
    folder `engine path` says it is not installed and names the install command (an unknown
    name would be rejected as having no install recipe)."""
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(tmp_path))
    assert main(["engine", "path", "vllm-router==0.1.17"]) == 1
    err = capsys.readouterr().err
    assert "run: servekit engine install vllm-router==0.1.17" in err and "no local install recipe" not in err


def test_the_lmcache_server_starts_before_the_engine_it_serves():
    plan = _launch("lmcache")
    assert [(p.role, p.kind) for p in plan.processes] == [("lmcache-server", COMPANION), ("serve", ENGINE)]
    companion = plan.processes[0]
    assert companion.argv[:4] == ("lmcache", "server", "--port", "5555")
    assert '"lmcache.mp.port":5555' in " ".join(plan.engine_server.argv)
    assert plan_from_dict(plan.to_dict()) == plan


def test_a_mooncake_plan_carries_its_master_its_config_files_and_the_router():
    plan = _launch("kv_store_centralized_mooncake")
    kinds = [(p.role, p.kind) for p in plan.processes]
    assert kinds[:2] == [("mooncake-master", COMPANION), ("mooncake-store", COMPANION)]
    assert kinds[-1] == ("router", ROUTER)
    assert [name for name, _ in plan.files] == ["MOONCAKE_CONFIG_PATH", "MOONCAKE_STORE_CONFIG_PATH"]
    # two instances behind the router: two machines' worth, so not for one machine
    assert further_nodes(plan) == ["$VLLM_INSTANCE_2"]
    with pytest.raises(ServekitError, match="spans several machines"):
        wire(plan, "127.0.0.1", 8000, None, None, lambda: 0)


def test_dry_run_shows_the_companion_before_the_server(capsys):
    assert main(["up", MODEL, "--hardware", "h100", "--kv-offload", "lmcache", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.index("# lmcache-server (companion)") < out.index("# serve (engine)")


def test_config_files_and_placeholders_are_bound_to_this_machine(tmp_path, monkeypatch):
    from launch.standins import StandInPrograms
    from servekit.launch.launch_plan import LaunchPlan, LaunchProcess

    engine = LaunchProcess("serve", ("vllm", "serve", "m"), {"MOONCAKE_CONFIG_PATH": "$MOONCAKE_CONFIG_PATH",
                                                             "GLOO_SOCKET_IFNAME": "$IFACE_NAME"}, kind=ENGINE)
    plan = LaunchPlan("vllm", "m", "m", (engine,),
                      files=(("MOONCAKE_CONFIG_PATH", '{"master_server_address": "$MOONCAKE_MASTER_IP:50051"}'),))
    wiring = wire(plan, "127.0.0.1", 40000, tmp_path, StandInPrograms(tmp_path), lambda: 41000)
    ((bound,),) = wiring.stages
    ((path, content),) = wiring.files
    assert path == tmp_path / "mooncake_config_path.json"
    assert content == '{"master_server_address": "127.0.0.1:50051"}'
    assert bound.env["MOONCAKE_CONFIG_PATH"] == str(path) and bound.env["GLOO_SOCKET_IFNAME"] == "lo"
    assert wiring.url == "http://127.0.0.1:40000"
    monkeypatch.delenv("HF_TOKEN", raising=False)
    gated = LaunchPlan("vllm", "m", "m", (LaunchProcess("serve", ("vllm", "serve", "m"), {"HF_TOKEN": "$HF_TOKEN"}),))
    with pytest.raises(ServekitError, match=r"\$HF_TOKEN .* has no value on this machine.*export HF_TOKEN"):
        wire(gated, "127.0.0.1", 40000, tmp_path, StandInPrograms(tmp_path), lambda: 41000)
