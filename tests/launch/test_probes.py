"""The probes' logic against a fake OpenAI-compatible server (tests/launch/fake_openai.py)."""

from __future__ import annotations

from launch.fake_openai import Behaviour, fake_server
from servekit.launch import probes
from servekit.launch.metrics import parse_metrics, probe_metrics
from servekit.launch.verify import verify_url


def test_every_probe_passes_against_a_well_behaved_server():
    with fake_server() as (url, _):
        target = probes.Target(url, "tiny")
        found = [probes.probe_health(target), probes.probe_models(target), probes.probe_chat(target),
                 probes.probe_stream(target), probes.probe_tools(target, "hermes"),
                 probes.probe_reasoning(target, "qwen3"), probes.probe_structured(target)]
    assert [p.name for p in found if not p.ok] == []
    assert "identical twice" in found[2].detail


def test_the_chat_probe_asks_for_temperature_zero():
    with fake_server() as (url, behaviour):
        probes.probe_chat(probes.Target(url, "tiny"))
    assert behaviour.requests and all(r["temperature"] == 0 for r in behaviour.requests)


def test_a_missing_served_name_fails_the_models_probe():
    with fake_server(Behaviour(listed_name="other")) as (url, _):
        probe = probes.probe_models(probes.Target(url, "tiny"))
    assert not probe.ok and "'tiny' missing" in probe.detail


def test_a_reply_that_breaks_the_schema_fails_structured_output():
    with fake_server(Behaviour(structured_reply='{"ok": "yes", "extra": 1}')) as (url, _):
        probe = probes.probe_structured(probes.Target(url, "tiny"))
    assert not probe.ok and "does not validate" in probe.detail


def test_tools_refused_fails_the_tool_probe():
    with fake_server(Behaviour(tools_status=400)) as (url, _):
        probe = probes.probe_tools(probes.Target(url, "tiny"), None)
    assert not probe.ok and "HTTP 400" in probe.detail


def test_a_refused_connection_is_a_failed_probe_not_an_exception():
    probe = probes.probe_health(probes.Target("http://127.0.0.1:9", "tiny"))
    assert not probe.ok and probe.detail


def test_metrics_are_parsed_with_prometheus_client():
    with fake_server() as (url, _):
        probe, values = probe_metrics(probes.Target(url, "tiny"))
    assert probe.ok
    assert values["vllm:prompt_tokens_total"] == 42.0
    assert parse_metrics("# TYPE x gauge\nx 1\n") == {"x": 1.0}


def test_metrics_that_are_not_prometheus_text_fail():
    with fake_server(Behaviour(metrics="{not prometheus")) as (url, _):
        probe, _ = probe_metrics(probes.Target(url, "tiny"))
    assert not probe.ok


def test_verify_by_url_reads_the_served_name_and_writes_evidence():
    with fake_server() as (url, _):
        result = verify_url(url)
    assert result.ok, result.probes
    assert result.run is None and result.evidence
    assert {p.name for p in result.probes} >= {"health", "models", "chat", "stream", "metrics"}


def test_a_metrics_port_of_its_own_is_read_from_the_log():
    from servekit.engines.registry import get_engine, native_engine
    from servekit.launch.metrics import metrics_url_of

    max_engine = get_engine("max")
    log = "Starting ASGI metrics server on port 8123\n"
    assert metrics_url_of("http://127.0.0.1:5000", max_engine, log) == "http://127.0.0.1:8123/metrics"
    assert metrics_url_of("http://127.0.0.1:5000", max_engine, "nothing") == "http://127.0.0.1:8001/metrics"
    assert metrics_url_of("http://127.0.0.1:5000", native_engine(), log) is None
