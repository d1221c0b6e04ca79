"""``up`` of a plan with several processes on this machine: prefill and decode servers behind a
router, companions first; each process its own group, log and readiness check; ``ps``, ``logs``
and ``down`` over all of them; a process that fails to become ready stops the whole run.

The plans come from the real pipeline (a test catalog with a prefill/decode strategy for a CPU
profile); the processes are ``standin_server.py`` (see there why). The real engines, router
included, run in the engine tier (test_engine_vllm_pd.py).
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace

import pytest

from launch.pd_catalog import HARDWARE, RECIPE_ID, pd_catalog
from launch.standins import StandInPrograms
from servekit.app.plan import plan as make_plan
from servekit.app.request import PlanRequest
from servekit.cli.app import main
from servekit.errors import ServekitError
from servekit.launch import records
from servekit.launch.launch_plan import COMPANION, ENGINE, ROUTER, LaunchProcess
from servekit.launch.recipe_plan import launch_plan_of
from servekit.launch.up import UpOptions, start_run, stop_recorded
from servekit.launch.wiring import option_value, set_option, wire
from servekit.processes import alive, port_free
from testing.tiny_model import write_tiny_llama

HARDWARE_DOC = {"name": HARDWARE, "profile": {}}


@pytest.fixture
def pd_plan(tmp_path):
    catalog = pd_catalog(tmp_path / "catalog", write_tiny_llama(tmp_path / "tiny"))
    result = make_plan(PlanRequest(RECIPE_ID, hardware=HARDWARE, catalog=str(catalog), checks=False))
    return launch_plan_of(result.plan, result.commands)


def _start(plan, programs, **options):
    return start_run(plan, HARDWARE_DOC, UpOptions(warm=False, ready_timeout=60, **options), programs=programs)


def _free(url: str) -> bool:
    host, port = url.rsplit("/", 1)[-1].split(":")
    return port_free(host, int(port))


def _none_alive(record) -> bool:
    return alive(record.pids, record.groups) == []


def _log_doc(record, role: str) -> dict:
    return json.loads(open(record.process(role).log, encoding="utf-8").readline())


def test_the_pipeline_gives_engines_then_the_router(pd_plan):
    assert [(p.role, p.kind, p.port) for p in pd_plan.processes] == [
        ("prefill", ENGINE, 8001), ("decode", ENGINE, 8002), ("router", ROUTER, None)]
    assert pd_plan.server.role == "router" and pd_plan.engine_server.role == "prefill"
    assert "http://$PREFILL_NODE_1:8001" in pd_plan.server.argv


def test_the_router_is_wired_to_the_ports_the_engine_servers_get(pd_plan, tmp_path):
    ports = iter(range(41001, 41100))
    wiring = wire(pd_plan, "127.0.0.1", 40000, tmp_path, StandInPrograms(tmp_path), lambda: next(ports))
    engines, (router,) = wiring.stages
    assert [b.role for b in engines] == ["prefill", "decode"]
    assert [b.url for b in engines] == ["http://127.0.0.1:41001", "http://127.0.0.1:41002"]
    words = list(router.command)
    assert option_value(words, "--prefill") == "http://127.0.0.1:41001"
    assert option_value(words, "--decode") == "http://127.0.0.1:41002"
    assert (option_value(words, "--host"), option_value(words, "--port")) == ("127.0.0.1", "40000")
    assert option_value(words, "--prometheus-port") == "41003"  # its own metrics port, not the fixed default
    assert not any("$" in w for w in words)
    assert wiring.url == router.url == "http://127.0.0.1:40000" and router.check.endswith("/readiness")


def test_options_are_set_in_place_or_appended():
    assert set_option(["a", "--port", "1"], "--port", "2") == ["a", "--port", "2"]
    assert set_option(["-rpc_port=5"], "-rpc_port", "6") == ["-rpc_port=6"]
    assert set_option(["a"], "--port", "2") == ["a", "--port", "2"]
    assert option_value(["-rpc_port=50051"], "-rpc_port") == "50051"


def test_a_plan_over_several_machines_does_not_start_here(pd_plan, tmp_path):
    follower = LaunchProcess("prefill_node", ("vllm", "serve", "m"), kind=ENGINE)
    spread = replace(pd_plan, processes=(*pd_plan.processes, follower))
    with pytest.raises(ServekitError, match="spans several machines"):
        wire(spread, "127.0.0.1", 40000, tmp_path, StandInPrograms(tmp_path), lambda: 41000)


def test_up_starts_every_process_in_order_and_down_stops_them_all(pd_plan, tmp_path, capsys):
    programs = StandInPrograms(tmp_path, {"prefill": ["--ready-after", "1.0"]})
    record = _start(pd_plan, programs)
    try:
        assert record.state == "ready", record.detail
        assert [p.role for p in record.processes] == ["prefill", "decode", "router"]
        assert len(set(record.groups)) == 3 and all(p.pid == p.pgid for p in record.processes)
        assert len({p.log for p in record.processes}) == 3
        router_started = _log_doc(record, "router")["started"]
        assert router_started > max(_log_doc(record, r)["started"] + (1.0 if r == "prefill" else 0) for r in
                                    ("prefill", "decode"))  # the router starts once both servers answer
        assert {"prefill: ready", "decode: ready", "router: ready"} <= set(record.phases)
        assert "--prefill" in _log_doc(record, "router")["argv"]
        assert main(["ps", "--format", "json"]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert [(p["role"], p["alive"]) for p in row["processes"]] == [("prefill", True), ("decode", True),
                                                                        ("router", True)]
        assert main(["logs", record.run]) == 0
        out = capsys.readouterr().out
        assert all(f"==> {role} (" in out for role in ("prefill", "decode", "router"))
        assert main(["logs", record.run, "--process", "router"]) == 0
        assert "==> router (" in capsys.readouterr().out
    finally:
        assert main(["down", record.run]) == 0
    assert _none_alive(record)
    assert all(_free(p.url) for p in record.processes)
    assert records.load(record.run).state == "stopped"


def test_a_process_that_fails_stops_the_run_and_is_named(pd_plan, tmp_path, capsys):
    from servekit.cli.up_cmd import _not_ready

    programs = StandInPrograms(tmp_path, {"decode": ["--ready-after", "0.5", "--exit-code", "3"]})
    record = _start(pd_plan, programs)
    assert record.state == "failed" and record.failed == "decode"
    assert "decode" in record.detail and "exited with code 3" in record.detail
    assert [p.role for p in record.processes] == ["prefill", "decode"]  # the router never started
    assert _none_alive(record)
    assert _not_ready(record) == 1
    err = capsys.readouterr().err
    assert "decode failed" in err and "decode: boom, exiting with 3" in err and "==> decode (" in err


def test_down_ends_a_process_that_ignores_sigint(pd_plan, tmp_path):
    import signal

    from servekit.processes import stop_processes

    record = _start(pd_plan, StandInPrograms(tmp_path, {"vllm-router": ["--stubborn"]}))
    assert record.state == "ready", record.detail
    steps = ((signal.SIGINT, 1.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))
    result = stop_processes(record.pids, record.groups, steps)
    assert result.clean and result.signals == ("SIGINT", "SIGTERM")
    assert _none_alive(record)
    stop_recorded(record)


def _lmcache(port: int) -> LaunchProcess:
    return LaunchProcess("lmcache-server", ("lmcache", "server", "--port", str(port), "--l1-size-gb", "1"),
                         kind=COMPANION)


def test_companions_start_first_and_keep_their_port(pd_plan, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    plan = replace(pd_plan, processes=(_lmcache(port), *pd_plan.processes))
    record = _start(plan, StandInPrograms(tmp_path, {"lmcache": ["--ready-after", "1.0"]}))
    try:
        assert record.state == "ready", record.detail
        assert [p.role for p in record.processes] == ["lmcache-server", "prefill", "decode", "router"]
        assert record.process("lmcache-server").kind == COMPANION
        companion_ready = json.loads(open(record.process("lmcache-server").log).read().splitlines()[1])["ready"]
        assert _log_doc(record, "prefill")["started"] >= companion_ready
        assert option_value(_log_doc(record, "lmcache-server")["argv"], "--port") == str(port)
    finally:
        stop_recorded(record)
    assert _none_alive(record)


def test_a_companion_port_in_use_refuses_before_anything_starts(pd_plan, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        plan = replace(pd_plan, processes=(_lmcache(sock.getsockname()[1]), *pd_plan.processes))
        with pytest.raises(ServekitError, match="lmcache-server listens on is in use"):
            _start(plan, StandInPrograms(tmp_path))
    assert records.list_ids() == []


def test_a_program_servekit_does_not_pin_is_refused(pd_plan, tmp_path):
    plan = replace(pd_plan, processes=(LaunchProcess("x", ("some-daemon", "--port", "1"), kind=COMPANION),
                                       *pd_plan.processes))
    with pytest.raises(ServekitError, match="no pinned program 'some-daemon'"):
        _start(plan, StandInPrograms(tmp_path))


def test_dry_run_lists_every_process_with_its_placeholders(tmp_path, capsys):
    catalog = pd_catalog(tmp_path / "catalog", write_tiny_llama(tmp_path / "tiny"))
    assert main(["up", RECIPE_ID, "--catalog", str(catalog), "--hardware", HARDWARE, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "# prefill (engine)" in out and "# decode (engine)" in out and "# router (router)" in out
    assert "--prefill http://$PREFILL_NODE_1:8001" in out
