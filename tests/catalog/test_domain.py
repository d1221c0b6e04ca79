"""Typed domain objects: built once from the plain documents, with the documents' meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import (
    HardwareBlock,
    KvOffload,
    KvStore,
    Omni,
    Recipe,
    kv_offload_keys,
    kv_offload_of,
    kv_store_of,
    recipe_of,
    strategies_of,
    strategy_of,
)


def _docs(recipe: dict, taxonomy: dict | None = None) -> CatalogDocuments:
    return CatalogDocuments(root=Path("."), taxonomy=taxonomy or {}, platforms={},
                            strategies={"tp": {"deploy_type": "single_node"}},
                            kv_store={"mc": {"deploy_type": "kv_store_lb"}}, recipes={"o/m": recipe})


def test_absent_null_and_empty_read_as_empty_containers_and_scalars_stay_as_written():
    recipe = Recipe.of({"model": None, "variants": {"default": {"precision": "fp8", "tp": {"h200": 2}}, "bare": None},
                        "features": {"on": {"args": ["--x"]}, "odd": "text"}, "opt_in_features": None})
    assert recipe.model.model_id is None and recipe.opt_in_features == [] and recipe.meta.hardware == {}
    assert recipe.variants["bare"].empty and not recipe.variants["default"].empty
    assert recipe.variant_or_default("bare").precision == "fp8"
    assert recipe.variants["default"].tp == {"h200": 2}
    assert recipe.features["odd"] is None and recipe.features["on"].modes is None


def test_hardware_override_blocks_keep_non_mapping_values_for_the_present_rule():
    recipe = Recipe.of({"hardware_overrides": {"nvidia": {"extra_args": ["--a"]}, "amd": None, "tpu": False}})
    assert isinstance(recipe.hardware_overrides["nvidia"], HardwareBlock)
    assert recipe.hardware_overrides["amd"] is None and recipe.hardware_overrides["tpu"] is False


def test_a_misshapen_section_raises_like_a_lookup_on_it_did():
    with pytest.raises(TypeError):
        Recipe.of({"model": 5})


def test_typed_objects_are_cached_per_document_and_rebuilt_when_it_is_replaced():
    docs = _docs({"model": {"model_id": "o/m"}})
    first = recipe_of(docs, "o/m")
    assert recipe_of(docs, "o/m") is first
    docs.recipes["o/m"] = {"model": {"model_id": "o/m2"}}
    assert recipe_of(docs, "o/m").model.model_id == "o/m2"


def test_strategies_serving_and_kv_store_together():
    docs = _docs({})
    assert strategy_of(docs, "mc").deploy_type == "kv_store_lb"
    assert strategy_of(docs, "nope").deploy_type is None
    assert list(strategies_of(docs)) == ["tp", "mc"]


def test_kv_store_reads_its_vllm_router_pd_and_process_blocks():
    store = KvStore.of("mc", {
        "deploy_type": "kv_store_lb", "router": {"policy": "cache_aware", "port": 30081},
        "vllm": {"vllm_args": ["--kv"], "env": {"A": "1"}, "install": {"nvidia": "pip x"}, "port": 8100},
        "pd": {"prefill": {"args": ["--p"]}, "decode": None}, "mooncake_master": {"command": "mm"},
        "mooncake_vllm_config": {"template": {"k": 1}, "note": "n"}, "default_instances": 3})
    assert (store.router_policy, store.router_port, store.router_install) == ("cache_aware", 30081, None)
    assert store.vllm_args == ["--kv"] and store.vllm_env == {"A": "1"} and store.vllm_install == {"nvidia": "pip x"}
    assert store.composes_with_pd and store.role_args("prefill") == ["--p"] and store.role_args("decode") is None
    assert store.master.command == "mm" and store.master.declared and not store.store_config.declared
    assert store.vllm_config_template == {"k": 1} and store.default_instances == 3
    bare = KvStore.of("bare", {"deploy_type": "kv_store_lb", "pd": {}})
    assert not bare.composes_with_pd and bare.vllm_port is None and bare.role_args(None) is None


def test_kv_offload_option_keeps_values_as_written():
    option = KvOffload.of("lm", {"args": ["--a"], "strategies": ["tp"], "requires_opt_in": True, "install": "pip lm",
                                 "companion": {"command": "serve-cache", "label": "Cache"}})
    assert option.args == ["--a"] and option.strategies == ["tp"] and option.requires_opt_in is True
    assert option.brands is None and option.install == "pip lm" and option.companion.label == "Cache"


def test_kv_lookups_return_none_for_unknown_or_empty_entries_and_cache_the_rest():
    docs = _docs({}, {"kv_offload": {"lm": {"args": ["--a"]}, "blank": {}}})
    assert kv_offload_keys(docs) == ["mc", "lm", "blank"]
    assert kv_offload_of(docs, "lm") is kv_offload_of(docs, "lm") and kv_offload_of(docs, "lm").args == ["--a"]
    assert kv_offload_of(docs, "blank") is None and kv_offload_of(docs, "nope") is None and kv_offload_of(docs, None) is None
    assert kv_store_of(docs, "mc").deploy_type == "kv_store_lb" and kv_store_of(docs, "tp") is None


def test_omni_tasks_bare_ids_and_maps_with_their_selector_key():
    omni = Omni.of({"port": 8091, "tasks": ["t2v", {"id": "i2v", "key": "fast", "model_id": "o/fast",
                                                     "hardware_overrides": {"h200": {"model_id": "o/h"}}},
                                            {"id": "t2i", "key": None}]})
    bare, mapped, null_key = omni.tasks
    assert (bare.id, bare.key) == ("t2v", "t2v")
    assert mapped.key == "fast" and mapped.block("h200").model_id == "o/h" and mapped.block("b200").model_id is None
    assert null_key.key is None and omni.port == 8091 and omni.serve_binary is None
    assert Recipe.of({}).omni.tasks == []


def test_install_tabs_and_dependencies():
    recipe = Recipe.of({"model": {"install": {"pip": False, "docker": {"command": "docker run x"}}},
                        "dependencies": [{"command": "pip y", "note": "why"}, "text"]})
    assert recipe.model.pip.dropped and not recipe.model.docker.dropped
    assert recipe.model.docker.command == "docker run x" and recipe.model.docker.note is None
    assert [(d.command, d.note) for d in recipe.dependencies] == [("pip y", "why")]


def test_kv_types_are_the_package_names_imported_on_first_use():
    import servekit.catalog.domain as domain
    from servekit.catalog.domain import kv_offload, kv_store

    assert (domain.KvStore, domain.KvProcess, domain.KvOffload) == (kv_store.KvStore, kv_store.KvProcess, kv_offload.KvOffload)
    assert {"KvStore", "KvProcess", "KvOffload"} <= set(domain.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        domain.Nope  # noqa: B018 - the lookup is the test
