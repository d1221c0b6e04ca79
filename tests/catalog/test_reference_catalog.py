"""The real catalogs: the reference snapshot and the seed recipe validate, and the schema knows
every key any of their files uses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from servekit.catalog.documents import bundled_catalog_dir, read_yaml
from servekit.catalog.schema import KvStore, Platforms, Recipe, Strategy, Taxonomy
from servekit.catalog.schema_check import unknown_keys
from servekit.catalog.validate import check_catalog, validate_catalog

SHARED = Path(__file__).resolve().parents[3] / "shared"
SEED_RECIPE = SHARED / "seeds" / "003_qwen3.8-27b_recipe.yaml"


def _model_for(path: Path, root: Path):
    rel = path.relative_to(root)
    if rel.parts[0] == "models":
        return Recipe
    if rel.parts[0] == "strategies":
        return Strategy
    if rel.parts[0] == "kv_store":
        return KvStore
    return {"taxonomy.yaml": Taxonomy, "platforms.yaml": Platforms}[rel.name]


def test_schema_knows_every_key_of_the_reference_catalog(reference_catalog):
    files = [(p, _model_for(p, reference_catalog)) for p in sorted(reference_catalog.rglob("*.yaml"))]
    assert len(files) > 150
    unknown = {str(path): keys for path, model in files if (keys := unknown_keys(model, read_yaml(path)))}
    assert unknown == {}


def test_schema_knows_every_key_of_the_seed_recipe():
    if not SEED_RECIPE.is_file():
        pytest.skip(f"{SEED_RECIPE} is not present")
    assert unknown_keys(Recipe, read_yaml(SEED_RECIPE)) == []


@pytest.fixture(scope="module")
def checked_reference(reference_catalog):
    return check_catalog(reference_catalog)


def test_reference_catalog_has_no_errors(checked_reference):
    findings = checked_reference.findings
    assert [f.render() for f in findings if f.is_error] == []
    # What remains is warranted: 'nightly' as a version, verified badges for profiles the
    # taxonomy does not define (they can never show), and a flag written with its value as one
    # argument item (plans split it).
    assert {f.code for f in findings} <= {"bad-version", "unknown-hardware", "spaced-argument"}
    for finding in findings:
        assert finding.location.line is not None and finding.location.key_path


def test_reference_catalog_loads_into_typed_models(checked_reference):
    checked = checked_reference
    assert checked.taxonomy is not None and "h200" in checked.taxonomy.hardware_profiles
    assert checked.recipes and all(r is not None for r in checked.recipes.values())
    recipe = checked.recipes["Qwen/Qwen3.8-27B"]
    assert recipe.features["spec_decoding"].modes["mtp"].args[0] == "--speculative-config"
    assert recipe.variants["ascend_w8a8"].default_modes == {"spec_decoding": "qwen3_5_mtp"}
    assert set(checked.kv_store) == {"kv_store_centralized_mooncake", "kv_store_distributed_mooncake"}


def test_seed_recipe_in_a_copy_of_the_reference_validates_clean(reference_catalog, tmp_path):
    if not SEED_RECIPE.is_file():
        pytest.skip("seed recipe not present")
    root = tmp_path / "catalog"
    shutil.copytree(reference_catalog, root)
    target = root / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    shutil.copyfile(SEED_RECIPE, target)
    findings = validate_catalog(root)
    assert [f.render() for f in findings if f.location.file == str(target)] == []
    assert not any(f.is_error for f in findings)


def test_bundled_catalog_has_no_errors():
    findings = validate_catalog(bundled_catalog_dir())
    assert [f.render() for f in findings if f.is_error] == []


def test_unknown_keys_are_kept_on_the_typed_model(reference_catalog):
    data = read_yaml(reference_catalog / "models" / "Qwen" / "Qwen3.8-27B.yaml")
    data["variants"]["default"]["future_key"] = {"x": 1}
    recipe = Recipe.model_validate(data)
    assert recipe.variants["default"].model_extra == {"future_key": {"x": 1}}
