"""Default rules and plan synthesis on small, hand-written catalogs (real code, no mocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servekit.app.plan import synthesized
from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import Feature, Recipe, Variant
from servekit.errors import SelectionError, ServekitError
from servekit.synthesis import selection as rules
from servekit.synthesis.render import render_plan, servekit_extras
from servekit.synthesis.resolve import resolve_selection, selection_from_request
from servekit.synthesis.synthesize import synthesize

PROFILES = {
    "h100": {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 640},
    "h200": {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 1128},
    "b200": {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 8, "vram_gb": 1440},
    "gb200": {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 4, "vram_gb": 768},
    "mi300x": {"brand": "AMD", "generation": "amd", "gpu_count": 8, "vram_gb": 1536},
    "spark": {"brand": "NVIDIA", "generation": "blackwell", "gpu_count": 1, "vram_gb": 128,
              "scalable": False, "restricted": True},
    "npu1": {"brand": "Huawei", "generation": "npu", "gpu_count": 1, "vram_gb": 128, "scalable": False,
             "restricted": True},
    "xeon": {"brand": "Intel", "generation": "cpu", "gpu_count": 4, "vram_gb": 1024, "restricted": True},
}
STRATEGIES = {
    "single_node_tp": {"name": "single_node_tp", "deploy_type": "single_node", "vllm_args": [],
                       "parallel_flag": "--tensor-parallel-size"},
    "multi_node_tp": {"name": "multi_node_tp", "deploy_type": "multi_node",
                      "parallel_flag": "--tensor-parallel-size", "env": {"NCCL_SOCKET_IFNAME": "$IFACE_NAME"}},
    "multi_node_dep": {"name": "multi_node_dep", "deploy_type": "multi_node", "parallel_flag": "--data-parallel-size",
                       "vllm_args": ["--enable-expert-parallel"]},
}


def recipe(**extra):
    doc = {
        "meta": {"hardware": {"spark": "verified", "npu1": "verified"}},
        "model": {"model_id": "org/m", "min_vllm_version": "0.9.0", "base_args": ["--trust-remote-code"]},
        "variants": {
            "default": {"precision": "bf16", "vram_minimum_gb": 300},
            "fp8": {"precision": "fp8", "vram_minimum_gb": 90, "model_id": "org/m-fp8", "min_vllm_version": "0.17.1",
                    "extra_args": ["--kv-cache-dtype", "fp8"],
                    "hardware_overrides": {"h100": {"extra_args": ["--max-num-seqs", "8"]}}},
            "nvfp4": {"precision": "nvfp4", "vram_minimum_gb": 60, "model_id": "org/m-nvfp4"},
        },
        "features": {
            "tools": {"description": "Tool calls.", "args": ["--enable-auto-tool-choice"]},
            "text_only": {"description": "No vision. Mutually exclusive with encoder_dp.", "args": ["--language-model-only"]},
            "encoder_dp": {"description": "Encoder DP.", "args": ["--mm-encoder-tp-mode", "data"]},
            "long": {"description": "Long context.", "args": ["--max-model-len", "1000000"],
                     "env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}},
            "spec": {"description": "Speculative decoding.", "default_mode": "mtp", "modes": {
                "mtp": {"args": ["--speculative-config", '{"method":"mtp"}'],
                        "hardware_overrides": {"blackwell": {"args": ["--speculative-config", '{"method":"mtp","n":5}']}}},
                "eagle": {"args": ["--speculative-config", '{"method":"eagle"}'], "variants": ["default"]}}},
        },
        "opt_in_features": ["text_only", "long", "spec"],
        "compatible_strategies": ["single_node_tp", "multi_node_tp", "multi_node_dep"],
        "hardware_overrides": {"nvidia": {"extra_env": {"NVIDIA_ONLY": "1"}}},
    }
    doc.update(extra)
    return doc


def docs_for(doc=None) -> CatalogDocuments:
    return CatalogDocuments(root=Path("."), taxonomy={"hardware_profiles": PROFILES}, platforms={},
                            strategies=STRATEGIES, kv_store={}, recipes={"org/m": doc or recipe()})


def test_default_hardware_prefers_h200_then_blackwell_for_fp4_then_author_pick():
    doc = recipe()
    assert rules.default_hardware(PROFILES, Recipe.of(doc), "default") == "h200"
    assert rules.default_hardware(PROFILES, Recipe.of(doc), "nvfp4") == "b200"
    doc["meta"]["default_hardware"] = "mi300x"
    assert rules.default_hardware(PROFILES, Recipe.of(doc), "default") == "mi300x"
    assert rules.compatible_hardware(PROFILES, Recipe.of(doc), "nvfp4") == ["b200", "gb200", "spark"]


def test_fitting_variant_on_non_scalable_hardware_takes_the_largest_that_fits():
    assert rules.fitting_variant(Recipe.of(recipe()), PROFILES["spark"], "spark") == "fp8"
    assert rules.fits_single_node(PROFILES["spark"], Variant.of("big", {"vram_minimum_gb": 300})) is False
    assert rules.variant_vram_minimum_gb(
        Variant.of("big", {"vram_minimum_gb": 300, "hardware_overrides": {"spark": {"vram_minimum_gb": 100}}}),
        "spark") == 100


def test_recommended_strategy_and_node_floors():
    doc = Recipe.of(recipe(default_strategy="single_node_tp",
                           strategy_min_gpus={"multi_node_dep": 32, "h100": {"multi_node_dep": 48}}))
    assert rules.recommended_strategy(doc, PROFILES["h200"], 1) == "single_node_tp"
    assert rules.recommended_strategy(doc, PROFILES["h200"], 2) == "multi_node_tp"
    assert rules.nodes_for_strategy(doc, "multi_node_dep", 8, "h200") == 4
    assert rules.nodes_for_strategy(doc, "multi_node_dep", 8, "h100") == 6
    assert rules.strategy_reachable(doc, "single_node_tp", "single_node", 8, "h100") is True
    assert rules.strategy_reachable(Recipe.of(recipe(strategy_min_gpus=16)), "single_node_tp", "single_node", 8) is False


def test_default_features_and_variant_forced_modes():
    doc = recipe(hardware_opt_in_features={"b200": ["tools"]})
    assert rules.default_features(Recipe.of(doc), "h200") == ["tools", "encoder_dp"]
    assert rules.default_features(Recipe.of(doc), "b200") == ["encoder_dp"]
    doc["variants"]["fp8"]["default_modes"] = {"spec": "mtp"}
    assert "spec" in rules.default_features(Recipe.of(doc), "h200", "fp8")


def test_mode_resolution_respects_variant_and_user_choice():
    doc = recipe()
    spec = Feature.of("spec", doc["features"]["spec"])
    fp8, default = Variant.of("fp8", doc["variants"]["fp8"]), Variant.of("default", doc["variants"]["default"])
    assert rules.resolve_mode(spec, "spec", fp8, "fp8", PROFILES["h200"], "h200", "eagle") == "mtp"
    assert rules.resolve_mode(spec, "spec", default, "default", PROFILES["h200"], "h200", "eagle") == "eagle"


def test_exclusions_from_phrase_and_explicit_key():
    doc = Recipe.of(recipe())
    assert rules.exclusive_with(doc, "encoder_dp") == {"text_only"}
    kept, notes = rules.apply_exclusions(doc, ["tools", "encoder_dp", "text_only"])
    assert kept == ["tools", "text_only"] and "text_only" in notes[0]
    explicit = recipe()
    explicit["features"]["text_only"]["description"] = "No vision."
    explicit["features"]["tools"]["exclusive_with"] = ["long"]
    assert rules.exclusive_with(Recipe.of(explicit), "long") == {"tools"}
    assert rules.exclusive_with(Recipe.of(explicit), "text_only") == set()


def test_plan_single_node_layers_provenance_env_and_min_version():
    docs = docs_for()
    sel = resolve_selection(docs, "org/m", hardware="h100", variant="fp8", enable=["long", "spec"])
    plan = synthesize(docs, sel)
    out = render_plan(plan)
    assert out["argv"][:3] == ["vllm", "serve", "org/m-fp8"]
    assert "--tensor-parallel-size" in out["argv"] and out["argv"][out["argv"].index("--tensor-parallel-size") + 1] == "8"
    assert out["env"] == {"NVIDIA_ONLY": "1", "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    sources = {tuple(p["arg"]): p["source"] for p in servekit_extras(plan)["provenance"]["serve"]["args"]}
    assert sources[("--max-num-seqs", "8")] == "variants.fp8.hardware_overrides.h100.extra_args"
    assert sources[("--speculative-config", '{"method":"mtp"}')] == "features.spec.modes.mtp.args"
    assert sources[("--kv-cache-dtype", "fp8")] == "variants.fp8.extra_args"
    assert plan.min_version == "0.17.1"  # a version compare, not a string compare ("0.9.0" > "0.17.1")
    moded = recipe()
    moded["features"]["spec"]["modes"]["mtp"]["min_vllm_version"] = "0.28.0"
    docs_mode = docs_for(moded)
    plan = synthesize(docs_mode, resolve_selection(docs_mode, "org/m", hardware="h100", variant="fp8", enable=["spec"]))
    assert (plan.min_version, plan.min_version_sources) == ("0.28.0", ("features.spec.modes.mtp.min_vllm_version",))
    blackwell = synthesize(docs, resolve_selection(docs, "org/m", hardware="b200", variant="fp8", enable=["spec"]))
    assert '{"method":"mtp","n":5}' in render_plan(blackwell)["argv"]


def test_multi_node_has_one_distinct_command_per_follower_rank():
    docs = docs_for()
    out = render_plan(synthesize(docs, resolve_selection(docs, "org/m", hardware="h100", strategy="multi_node_tp",
                                                         node_count=4)))
    assert out["deploy_type"] == "multi_node" and len(out["worker_argvs"]) == 3
    ranks = [argv[argv.index("--node-rank") + 1] for argv in out["worker_argvs"]]
    assert ranks == ["1", "2", "3"] and all("--headless" in a for a in out["worker_argvs"])
    assert out["head_argv"][out["head_argv"].index("--tensor-parallel-size") + 1] == "32"
    dep = render_plan(synthesize(docs, resolve_selection(docs, "org/m", hardware="h100", strategy="multi_node_dep",
                                                         node_count=3)))
    assert [a[a.index("--data-parallel-start-rank") + 1] for a in dep["worker_argvs"]] == ["8", "16"]


def test_cli_choice_for_oversized_variant_on_workstation_falls_back_with_a_note():
    docs = docs_for()
    sel = resolve_selection(docs, "org/m", hardware="spark")
    assert sel.variant == "fp8" and sel.notes


def test_ascend_gets_its_image_and_npu_devices():
    docs = docs_for()
    out = render_plan(synthesize(docs, resolve_selection(docs, "org/m", hardware="npu1", variant="fp8")))
    assert out["docker_image"].startswith("quay.io/ascend/vllm-ascend")
    assert "--gpus" not in out["docker_argv"] and "/dev/davinci0" in out["docker_argv"]


def test_no_image_means_no_docker_form():
    doc = recipe()
    doc["model"]["nightly_required"] = True
    docs = docs_for(doc)
    out = render_plan(synthesize(docs, resolve_selection(docs, "org/m", hardware="xeon")))
    assert "docker_image" not in out and "docker_command" not in out and out["argv"]


def test_unknown_names_list_valid_choices():
    docs = docs_for()
    with pytest.raises(SelectionError, match="valid choices: .*fp8"):
        resolve_selection(docs, "org/m", variant="int3")
    with pytest.raises(SelectionError, match="valid choices: .*tools"):
        resolve_selection(docs, "org/m", enable=["nope"])
    with pytest.raises(SelectionError, match="valid choices: mtp, eagle"):
        resolve_selection(docs, "org/m", modes={"spec": "medusa"})
    with pytest.raises(SelectionError, match="does not run on"):
        resolve_selection(docs, "org/m", variant="nvfp4", hardware="h100")
    with pytest.raises(ServekitError, match="unknown engine 'bogus'"):
        synthesized(docs, selection_from_request(docs, {"recipe": "org/m", "hardware": "h100", "variant": "default",
                                                        "strategy": "single_node_tp", "engine": "bogus"}))
