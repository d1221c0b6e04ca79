"""Loading the typed catalog, the fast path's independence from pydantic, and robustness:
no input makes validation raise instead of reporting."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.conftest import RECIPE, RECIPE_PATH
from servekit.catalog.documents import read_documents
from servekit.catalog.validate import load_checked_catalog
from servekit.errors import CatalogError


def test_load_checked_catalog_returns_typed_documents(mini):
    checked = load_checked_catalog(mini.root)
    recipe = checked.recipes["Org/Model"]
    assert recipe.features["text_only"].exclusive_with == ["encoder_parallel"]
    assert recipe.variants["fp8"].hardware_overrides["hopper"].extra_args == ["--max-num-seqs", "8"]
    assert checked.strategies["multi_node_tp"].deploy_type == "multi_node"
    assert checked.taxonomy.hardware_profiles["b200"].compute_arch == "sm100"


def test_load_checked_catalog_raises_the_first_error_with_a_count(mini):
    mini.replace(RECIPE_PATH, "  architecture: dense\n", "  architecture: hybrid\n")
    mini.replace(RECIPE_PATH, "    vram_minimum_gb: 20\n", "    vram_minimum_gb: x\n")
    with pytest.raises(CatalogError) as info:
        load_checked_catalog(mini.root)
    assert "and 1 more" in str(info.value)
    assert info.value.location.file.endswith("Model.yaml")


def test_documents_reader_keeps_its_contract(mini):
    docs = read_documents(mini.root, only_recipes=["Org/Model"])
    assert list(docs.recipes) == ["Org/Model"]
    assert docs.recipes["Org/Model"]["meta"]["date_added"] == "2026-01-02"
    assert set(docs.strategies) == {"single_node_tp", "multi_node_tp"}
    assert docs.sources["models/Org/Model"] == mini.root / RECIPE_PATH


def test_fast_path_does_not_import_pydantic():
    code = (
        "import sys; from servekit.catalog.documents import read_documents, resolve_catalog_dir; "
        "read_documents(resolve_catalog_dir()); print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=6),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["a", "h200"]), st.integers(0, 2), max_size=2),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, RECIPE.count("\n") - 1), value=_SCALARS)
def test_any_single_value_change_is_reported_not_raised(mini, line, value):
    import json

    lines = RECIPE.splitlines()
    head, sep, _rest = lines[line].partition(":")
    if not sep:
        return
    lines[line] = f"{head}: {json.dumps(value)}"
    mini.write(RECIPE_PATH, "\n".join(lines) + "\n")
    findings = mini.findings()  # must not raise, whatever the value
    for finding in findings:
        assert finding.location.file and finding.message and finding.fix


def test_yml_recipes_are_read_and_validated(mini):
    (mini.root / RECIPE_PATH).rename(mini.root / "models/Org/Model.yml")
    assert list(read_documents(mini.root).recipes) == ["Org/Model"]
    mini.replace("models/Org/Model.yml", "  architecture: dense\n", "  architecture: hybrid\n")
    (finding,) = mini.findings()
    assert finding.location.file.endswith("Model.yml") and finding.code == "bad-value"
