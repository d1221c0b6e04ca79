"""A launch without ``--gpu-memory-utilization`` budgets its vLLM release's default: 0.9 up to
0.19, 0.92 from 0.20 (``default_utilization`` in ``servekit.fit.release_rules``). The rule is
checked against the default every stored flag catalog records, and the planner's budget follows
it on GPUs and on a CPU node, while a stated utilization always wins."""

from __future__ import annotations

import shlex

import pytest

from servekit.engines.vllm.catalog import CATALOGS
from servekit.engines.vllm.versions import stored_versions
from servekit.facts import shipped_facts
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import launch_settings
from servekit.fit.planner import FitRequest, plan_fit
from servekit.fit.versions import VllmRun

H100 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 1, "vram_gb": 80}
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _catalog_default(version: str) -> float:
    spec = CATALOGS.load(version).get("--gpu-memory-utilization")
    assert spec is not None, version
    return float(spec.default)


@pytest.mark.parametrize("version", stored_versions())
def test_the_rule_is_each_stored_releases_own_default(version):
    assert VllmRun(version).default_utilization == _catalog_default(version)


def test_the_default_changed_at_0_20():
    assert VllmRun("0.19.1").default_utilization == 0.9
    assert VllmRun("0.20.0").default_utilization == 0.92
    assert VllmRun(None).default_utilization == 0.92  # no version: the newest release's rules
    assert VllmRun("0.20.0.dev5").default_utilization == 0.9  # a build before the release it names


def _report(argv: str, version: str | None):
    device = device_from_profile("h100", H100)
    return plan_fit(FitRequest(shipped_facts(MODEL), device, launch_settings(shlex.split(argv)),
                               engine_version=version))


def test_the_budget_follows_the_release_without_a_flag():
    old, new = _report("--max-model-len 8192", "0.19.1"), _report("--max-model-len 8192", "0.20.0")
    memory = old.device_memory_gib
    assert old.budget_gib == pytest.approx(0.9 * memory)
    assert new.budget_gib == pytest.approx(0.92 * memory)
    assert new.kv_tokens > old.kv_tokens


def test_a_stated_utilization_wins_in_every_release():
    for version in ("0.19.1", "0.20.0", None):
        report = _report("--max-model-len 8192 --gpu-memory-utilization 0.8", version)
        assert report.budget_gib == pytest.approx(0.8 * report.device_memory_gib)
