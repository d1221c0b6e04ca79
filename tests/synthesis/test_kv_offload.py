"""KV offload: taxonomy options compose with a serving strategy; Mooncake wraps it in a shell."""

from __future__ import annotations

import pytest

from servekit.errors import SelectionError
from servekit.synthesis.render import render_plan, servekit_extras
from servekit.synthesis.resolve import resolve_selection
from servekit.synthesis.synthesize import synthesize

RECIPE = "Qwen/Qwen3.8-27B"


def plan(docs, **choices):
    p = synthesize(docs, resolve_selection(docs, RECIPE, **choices))
    return render_plan(p), servekit_extras(p)


def test_option_args_env_and_companion(reference_docs):
    out, extra = plan(reference_docs, kv_offload="offloading_fs")
    assert "OffloadingConnector" in out["argv"][-1] and out["env"]["PYTHONHASHSEED"] == "0"
    out, extra = plan(reference_docs, kv_offload="lmcache")
    assert out["companions"][0]["label"] == "LMCache Server"
    assert {"kind": "kv_offload", "command": 'uv pip install "lmcache==0.5.1"', "note": "for lmcache",
            "source": "taxonomy.kv_offload.lmcache.install", "forms": ["pip", "docker"]} in extra["install"]


def test_options_that_do_not_apply_are_refused(reference_docs):
    with pytest.raises(SelectionError, match="does not compose"):
        resolve_selection(reference_docs, "moonshotai/Kimi-K2.5", strategy="pd_cluster", kv_offload="simple")
    with pytest.raises(SelectionError, match="not offered"):
        resolve_selection(reference_docs, "Google/gemma-4-12B-it", kv_offload="offloading_cpu")
    with pytest.raises(SelectionError, match="NVIDIA or AMD"):
        resolve_selection(reference_docs, RECIPE, hardware="xeon6", kv_offload="kv_store_centralized_mooncake")


def test_mooncake_shell_min_version_and_router(reference_docs):
    out, extra = plan(reference_docs, kv_offload="kv_store_centralized_mooncake")
    assert out["deploy_type"] == "kv_store_lb" and out["serving_strategy"] == "single_node_tp"
    assert out["instances"] == 2 and "--backend-url http://$VLLM_INSTANCE_2:8000" in out["router"]["command"]
    assert out["store"]["config"]["mode"] == "standalone-store"
    assert extra["min_vllm_version"] == "0.21.0"  # the kv deployment's floor beats the recipe's 0.17.0
    assert "-v" in out["vllm_docker_argv"] and "$MOONCAKE_CONFIG_PATH:$MOONCAKE_CONFIG_PATH:ro" in out["vllm_docker_argv"]
