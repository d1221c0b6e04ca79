"""What launch reads from the engines' specs: startup-log regexes, the metrics port, the CPU KV
space variable, and MAX's CPU pool as fit predicts it."""

from __future__ import annotations

import re

import pytest

from servekit.engines.common.specs import PHASES
from servekit.engines.registry import get_engine, native_engine
from servekit.launch.launch_plan import LaunchPlan, LaunchProcess
from servekit.launch.machine import LocalMachine
from servekit.launch.prediction import cpu_space_gib, kv_space_env, predict, predicted_figures
from testing.tiny_model import write_tiny_llama


@pytest.mark.parametrize("engine_id", ["vllm", "max"])
def test_each_fact_regex_has_one_group_and_each_phase_is_known(engine_id):
    launch = get_engine(engine_id).launch
    assert set(launch.log_phases) == set(PHASES)
    assert launch.log_facts and all(re.compile(rx).groups == 1 for rx in launch.log_facts.values())
    assert all(re.compile(rx).groups >= 2 for rx in launch.log_products.values())


def test_vllms_concurrency_is_its_one_group():
    line = "CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 1,024 tokens per request: 1024.00x"
    match = re.search(native_engine().launch.log_facts["max_concurrency"], line)
    assert match.group(1) == "1024.00"


def test_the_cpu_kv_space_variable_is_the_native_engines():
    assert kv_space_env() == native_engine().launch.kv_space_env == "VLLM_CPU_KVCACHE_SPACE"
    assert cpu_space_gib({"VLLM_CPU_KVCACHE_SPACE": "2"}) == 2.0 and cpu_space_gib({}) is None


def test_max_declares_its_metrics_port_and_the_variable_that_moves_it():
    launch = get_engine("max").launch
    assert launch.metrics_port == 8001 and launch.metrics_port_env == "MAX_SERVE_METRICS_ENDPOINT_PORT"
    assert native_engine().launch.metrics_port is None


def test_a_run_gets_its_own_metrics_port_unless_the_plan_sets_one():
    from servekit.launch.up import run_env

    env = run_env(get_engine("max"), {"A": "1"}, "127.0.0.1")
    assert env["A"] == "1" and int(env["MAX_SERVE_METRICS_ENDPOINT_PORT"]) > 0
    assert run_env(get_engine("max"), {"MAX_SERVE_METRICS_ENDPOINT_PORT": "9"}, "127.0.0.1") == {
        "MAX_SERVE_METRICS_ENDPOINT_PORT": "9"}
    assert run_env(native_engine(), {}, "127.0.0.1") == {}


@pytest.mark.parametrize(("extra", "requests"), [((), 1), (("--max-num-seqs", "3"), 3)])
def test_max_on_a_cpu_predicts_a_pool_of_whole_requests_plus_the_null_page(tmp_path, extra, requests):
    model = write_tiny_llama(tmp_path / "tiny", dtype="float32")
    argv = ("vllm", "serve", str(model), "--max-model-len", "512", "--dtype", "float32", *extra)
    plan = LaunchPlan("max", str(model), "tiny", (LaunchProcess("server", (), {}, argv),))
    machine = LocalMachine("Intel(R) Xeon(R) Processor", 2, 2, 23.5)
    figures = predicted_figures(predict(plan, machine.fit_profile(), "local"))
    assert figures["kv_tokens"] == (512 // 128 * requests + 1) * 128
    assert figures["block_size"] == 128
