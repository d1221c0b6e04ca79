"""The catalog shipped in the package: same data as the reference, its own words.

Data facts (ids, flags, numbers, env, images) must equal the reference catalog and the seed
recipe; prose (descriptions, guides, notes, comments) is servekit's own and must not repeat
the reference text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from servekit.catalog.documents import bundled_catalog_dir, read_documents, read_yaml
from servekit.catalog.schema.taxonomy import SERVEKIT_PROFILE_KEYS
from testing.shared import REFERENCE_CATALOG, SHARED

SEED_RECIPE = SHARED / "seeds" / "003_qwen3.8-27b_recipe.yaml"
SEED_ID = "Qwen/Qwen3.8-27B"

PROSE_KEYS = frozenset(
    {"description", "guide", "note", "tooltip", "blurb", "performance_headline"}
)
"""Keys whose values are free text; everything else is data and must match exactly."""

SCHEMA_EXTENSIONS = frozenset({"exclusive_with"})
"""Keys servekit's catalog adds on top of the recipes schema."""

COMMENT_CARRYING_KEYS = frozenset({"command"})
"""Shell commands whose leading ``#`` lines are notes for the reader, not data."""

QAIC_RECIPES = ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct")
"""Recipes of the models the QAIC engine-argument seed uses as examples."""

QAIC_KEYS = ("soc_count", "socs_per_card", "nsp_cores_per_soc", "memory_gb_per_soc")


def data_only(value: Any, *, drop: frozenset[str] = PROSE_KEYS) -> Any:
    """The value with prose removed: prose keys dropped, comment lines cut from commands."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in drop:
                continue
            if key in COMMENT_CARRYING_KEYS and isinstance(item, str):
                item = "\n".join(
                    line for line in item.splitlines() if not line.lstrip().startswith("#")
                )
            out[key] = data_only(item, drop=drop)
        return out
    if isinstance(value, list):
        return [data_only(v, drop=drop) for v in value]
    return value


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Flatten to ``{"a.b[0].c": leaf}`` so a failing comparison names the exact fact."""
    if isinstance(value, dict):
        if not value:
            return {path: {}}
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(leaves(item, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list):
        if not value:
            return {path: []}
        out = {}
        for index, item in enumerate(value):
            out.update(leaves(item, f"{path}[{index}]"))
        return out
    return {path: value}


def assert_same_data(ours: Any, theirs: Any, what: str) -> None:
    mine = leaves(data_only(ours, drop=PROSE_KEYS | SCHEMA_EXTENSIONS))
    ref = leaves(data_only(theirs, drop=PROSE_KEYS | SCHEMA_EXTENSIONS))
    missing = {k: v for k, v in ref.items() if k not in mine}
    extra = {k: v for k, v in mine.items() if k not in ref}
    changed = {k: (mine[k], ref[k]) for k in ref.keys() & mine.keys() if mine[k] != ref[k]}
    assert not (missing or extra or changed), (
        f"{what}: missing={missing} extra={extra} changed(ours, reference)={changed}"
    )


@pytest.fixture(scope="module")
def bundled():
    return read_documents(bundled_catalog_dir())


@pytest.fixture(scope="module")
def reference():
    if not REFERENCE_CATALOG.is_dir():
        pytest.skip("../shared/reference/catalog is not present")
    return read_documents(
        REFERENCE_CATALOG,
        only_recipes=[SEED_ID, *QAIC_RECIPES],
    )


@pytest.fixture(scope="module")
def seed_recipe():
    if not SEED_RECIPE.is_file():
        pytest.skip("../shared/seeds is not present")
    return read_yaml(SEED_RECIPE)


# (a) taxonomy ----------------------------------------------------------------------------


def test_every_reference_hardware_profile_has_equal_facts(bundled, reference):
    ours = bundled.taxonomy["hardware_profiles"]
    for hw_id, profile in reference.taxonomy["hardware_profiles"].items():
        assert hw_id in ours, f"hardware profile {hw_id} is missing"
        assert data_only(ours[hw_id], drop=PROSE_KEYS | set(SERVEKIT_PROFILE_KEYS)) == data_only(profile), hw_id
        assert ours[hw_id]["description"], f"{hw_id} needs a description"


def test_taxonomy_vocabulary_matches_reference(bundled, reference):
    for key in ("tasks", "strategies", "kv_offload_groups", "kv_offload"):
        assert data_only(bundled.taxonomy[key]) == data_only(reference.taxonomy[key]), key
    extra_top = set(bundled.taxonomy) - set(reference.taxonomy)
    assert not extra_top, f"unexpected taxonomy sections {extra_top}"


@pytest.mark.parametrize(
    ("hw_id", "socs_per_card", "memory_per_soc"),
    [("ai100_standard", 1, 16), ("ai100_ultra", 4, 32)],
)
def test_cloud_ai_100_profiles(bundled, hw_id, socs_per_card, memory_per_soc):
    profile = bundled.taxonomy["hardware_profiles"][hw_id]
    assert profile["brand"] == "Qualcomm"
    assert profile["generation"] == "qaic"
    assert profile["restricted"] is True
    assert profile["multi_node"] is False
    for key in QAIC_KEYS:
        assert isinstance(profile[key], int) and profile[key] > 0, key
    assert profile["socs_per_card"] == socs_per_card
    assert profile["nsp_cores_per_soc"] == 16
    assert profile["memory_gb_per_soc"] == memory_per_soc
    # One device per SoC (QID), whole cards only; node memory is the sum over its SoCs.
    assert profile["gpu_count"] == profile["soc_count"]
    assert profile["soc_count"] % profile["socs_per_card"] == 0
    assert profile["vram_gb"] == profile["soc_count"] * profile["memory_gb_per_soc"]
    # Public card specs: Standard 16 GB per card, Ultra 128 GB per card.
    card_memory = profile["socs_per_card"] * profile["memory_gb_per_soc"]
    assert card_memory == {1: 16, 4: 128}[socs_per_card]


def test_qaic_keys_only_on_qaic_profiles(bundled):
    for hw_id, profile in bundled.taxonomy["hardware_profiles"].items():
        has_keys = any(key in profile for key in QAIC_KEYS)
        assert has_keys == (profile["generation"] == "qaic"), hw_id


# (b) strategies, kv_store, platforms -----------------------------------------------------


def test_strategies_carry_reference_data(bundled, reference):
    assert set(bundled.strategies) == set(reference.strategies)
    for name, doc in reference.strategies.items():
        assert data_only(bundled.strategies[name]) == data_only(doc), name
        assert bundled.strategies[name]["description"].strip()


def test_kv_store_deployments_carry_reference_data(bundled, reference):
    assert set(bundled.kv_store) == set(reference.kv_store)
    for name, doc in reference.kv_store.items():
        assert data_only(bundled.kv_store[name]) == data_only(doc), name


def test_platforms_carry_reference_data(bundled, reference):
    assert data_only(bundled.platforms) == data_only(reference.platforms)


# (c) the seed recipe ---------------------------------------------------------------------


def test_seed_recipe_keeps_every_data_fact(bundled, seed_recipe):
    assert_same_data(bundled.recipes[SEED_ID], seed_recipe, SEED_ID)


def test_seed_recipe_spot_checks(bundled):
    recipe = bundled.recipes[SEED_ID]
    features = recipe["features"]
    assert features["long_context"]["env"] == {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    assert set(features["spec_decoding"]["modes"]) == {"mtp", "qwen3_5_mtp", "dflash", "dspark"}
    assert len(recipe["variants"]) == 7
    assert recipe["variants"]["ascend_w8a8"]["hardware_overrides"]["ascend_950pr"][
        "docker_image"
    ] == "quay.io/ascend/vllm-ascend:qwen3.8-a5"
    assert "6.6M" in recipe["meta"]["performance_headline"]
    assert "377,456" in recipe["guide"] and "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in recipe["guide"]


def test_seed_guide_figures_and_commands_survive_the_rewrite(bundled, seed_recipe):
    """The guide is reworded, but every number and every code block of the seed stays."""
    seed_guide, ours = seed_recipe["guide"], bundled.recipes[SEED_ID]["guide"]
    figures = set(re.findall(r"\d[\d,.]*\d|\d", seed_guide))
    assert sorted(f for f in figures if f not in ours) == []
    blocks = re.findall(r"```.*?```", seed_guide, re.S)
    assert blocks and [b for b in blocks if b not in ours] == []
    assert ours != seed_guide


def test_text_only_and_encoder_parallel_exclude_each_other(bundled):
    features = bundled.recipes[SEED_ID]["features"]
    assert features["text_only"]["exclusive_with"] == ["encoder_parallel"]
    assert features["encoder_parallel"]["exclusive_with"] == ["text_only"]


# QAIC and MAX example recipes ------------------------------------------------------------


@pytest.mark.parametrize("recipe_id", QAIC_RECIPES)
def test_qaic_recipes_keep_reference_facts(bundled, reference, recipe_id):
    """Everything the reference states stays; Cloud AI 100 entries are the only additions."""
    ours = leaves(data_only(bundled.recipes[recipe_id], drop=PROSE_KEYS | SCHEMA_EXTENSIONS))
    theirs = leaves(data_only(reference.recipes[recipe_id], drop=PROSE_KEYS | SCHEMA_EXTENSIONS))
    for path, value in theirs.items():
        if value == {} and any(k.startswith(path + ".") for k in ours):
            continue  # an empty mapping we now fill with Cloud AI 100 entries
        assert ours.get(path) == value, f"{recipe_id}: {path}"
    added = [p for p in ours if p not in theirs]
    assert added and all("ai100" in p or "qaic" in p for p in added), added
    hardware = bundled.recipes[recipe_id]["meta"]["hardware"]
    assert hardware["ai100_standard"] == hardware["ai100_ultra"] == "supported"


def qaic_override(bundled, recipe_id: str) -> tuple[list[str], dict[str, Any]]:
    args = bundled.recipes[recipe_id]["hardware_overrides"]["qaic"]["extra_args"]
    return args, json.loads(args[args.index("--additional-config") + 1])


def test_llama_qaic_launch_is_the_seed_cli_example(bundled):
    args, config = qaic_override(bundled, "meta-llama/Llama-3.1-8B-Instruct")
    for flag, value in [
        ("--quantization", "mxfp6"),
        ("--kv-cache-dtype", "mxint8"),
        ("--max-num-seqs", "4"),
        ("--max-model-len", "2048"),
        ("--long-prefill-token-threshold", "128"),
    ]:
        assert args[args.index(flag) + 1] == value
    assert config == {"override_qaic_config": {"device_group": [0], "num_cores": 16}}


def test_vlm_qaic_launch_is_the_seed_multimodal_example(bundled):
    args, config = qaic_override(bundled, "Qwen/Qwen2.5-VL-7B-Instruct")
    assert config == {
        "override_qaic_config": {"device_group": [0, 1, 2, 3], "num_cores": 16},
        "height": [364, 512],
        "width": [532, 910],
    }
    assert "draft_override_qaic_config" not in config  # SpD and multimodal exclude each other


@pytest.mark.parametrize("recipe_id", QAIC_RECIPES)
@pytest.mark.parametrize("hw_id", ["ai100_standard", "ai100_ultra"])
def test_qaic_device_group_matches_tp_and_hardware(bundled, recipe_id, hw_id):
    _, config = qaic_override(bundled, recipe_id)
    target = config["override_qaic_config"]
    profile = bundled.taxonomy["hardware_profiles"][hw_id]
    tp = bundled.recipes[recipe_id]["strategy_overrides"]["single_node_tp"]["tp"][hw_id]
    assert len(target["device_group"]) == tp
    assert max(target["device_group"]) < profile["soc_count"]
    assert target["num_cores"] <= profile["nsp_cores_per_soc"]


def test_gemma3_recipe_for_max(bundled):
    recipe = bundled.recipes["google/gemma-3-12b-it"]
    assert recipe["model"]["model_id"] == "google/gemma-3-12b-it"
    assert recipe["model"]["context_length"] == 131072
    assert recipe["variants"]["default"]["precision"] == "bf16"
    assert set(recipe["meta"]["tasks"]) == {"multimodal", "text"}
    # Architecture facts from the public config, stated in the guide for the reader.
    for fact in ("48 layers", "3840", "16 attention heads", "8 KV heads", "head_dim 256",
                 "1024", "5:1", "262,144"):
        assert fact in recipe["guide"], fact
    assert "max warm-cache" in recipe["guide"]


def test_bundled_ids_resolve(bundled):
    """Every hardware id, strategy and task a bundled recipe names is declared."""
    hardware = set(bundled.taxonomy["hardware_profiles"])
    generations = {p["generation"] for p in bundled.taxonomy["hardware_profiles"].values()}
    brands = {p["brand"].lower() for p in bundled.taxonomy["hardware_profiles"].values()}
    tasks = {t["id"] for t in bundled.taxonomy["tasks"]}
    for rid, recipe in bundled.recipes.items():
        assert set(recipe["meta"]["tasks"]) <= tasks, rid
        assert set(recipe["meta"].get("hardware", {})) <= hardware, rid
        assert set(recipe.get("compatible_strategies", [])) <= set(bundled.strategies), rid
        assert set(recipe.get("hardware_overrides", {})) <= hardware | generations | brands, rid
        for variant in recipe["variants"].values():
            assert set(variant.get("supported_hardware", [])) <= hardware, rid


# (d) our own words -----------------------------------------------------------------------

_CODE_START = re.compile(r"^(--|vllm |export |docker |uv |pip |python|\||```|\$|[{'\"\[])")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


def prose_line(line: str) -> str | None:
    """The text of a line if it reads as a sentence fragment, else None (code, data)."""
    text = line.strip()
    text = re.sub(r"^#+\s*", "", text)
    text = re.sub(r"^-\s+", "", text)
    text = re.sub(r"^[A-Za-z_][\w.]*:\s*", "", text)  # a YAML key in front of a value
    text = re.sub(r"\S+://\S+", "", text)  # links are references, not wording
    text = text.strip().strip("\"'>|").strip()
    if len(text) < 30 or _CODE_START.match(text) or text.endswith("\\") or " --" in text:
        return None
    if len(_WORD.findall(text)) < 5:
        return None
    letters = sum(ch.isalpha() or ch.isspace() for ch in text)
    return text if letters / len(text) >= 0.75 else None


def prose_runs(lines: list[str], size: int = 3) -> set[tuple[str, ...]]:
    marked = [prose_line(line) for line in lines]
    runs = set()
    for start in range(len(marked) - size + 1):
        window = marked[start : start + size]
        if all(window):
            runs.add(tuple(window))
    return runs


def bundled_files() -> list[Path]:
    root = bundled_catalog_dir()
    return sorted(p for p in root.rglob("*.yaml"))


def test_no_file_is_a_copy_of_a_reference_file(reference):
    reference_bytes = {p.read_bytes() for p in REFERENCE_CATALOG.rglob("*.yaml")}
    for path in bundled_files():
        assert path.read_bytes() not in reference_bytes, f"{path} is a reference file"


def test_no_runs_of_reference_prose(reference):
    ref_runs: set[tuple[str, ...]] = set()
    for path in REFERENCE_CATALOG.rglob("*.yaml"):
        ref_runs |= prose_runs(path.read_text(encoding="utf-8").splitlines())
    shared = {}
    for path in bundled_files():
        common = prose_runs(path.read_text(encoding="utf-8").splitlines()) & ref_runs
        if common:
            shared[path.name] = sorted(common)[:3]
    assert not shared, f"prose repeated from the reference catalog: {shared}"


def test_no_long_reference_prose_line(reference):
    """A single sentence of 60+ characters taken over word for word is a copy too."""
    ref_lines = set()
    for path in REFERENCE_CATALOG.rglob("*.yaml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = prose_line(line)
            if text and len(text) >= 60:
                ref_lines.add(text)
    copied = {}
    for path in bundled_files():
        hits = [
            text
            for line in path.read_text(encoding="utf-8").splitlines()
            if (text := prose_line(line)) and text in ref_lines
        ]
        if hits:
            copied[path.name] = hits[:5]
    assert not copied, f"sentences copied from the reference catalog: {copied}"


def test_the_prose_detector_tells_text_from_data():
    assert prose_line("  # Every GPU registers this much DRAM; per-node usage is large") is not None
    assert prose_line('    description: "Full precision BF16 checkpoint for one GPU"') is not None
    assert prose_line('      - "--kv-transfer-config"') is None
    assert prose_line("    --speculative-config '{\"method\":\"mtp\"}' \\") is None
    assert prose_line("  | FP8 | 377,456 | 14.28 GiB | 0.771 |") is None


# validation, once the validator exists ---------------------------------------------------


def test_bundled_catalog_validates_cleanly():
    validate = pytest.importorskip("servekit.catalog.validate")
    if not hasattr(validate, "validate_catalog"):
        pytest.skip("servekit.catalog.validate.validate_catalog is not available")
    result = validate.validate_catalog(bundled_catalog_dir())
    findings = getattr(result, "findings", result)
    errors = [f for f in findings if getattr(f, "is_error", True)]
    assert not errors, [getattr(f, "render", lambda: f)() for f in errors]
