"""A facts JSON file is checked key by key: a bad one is a ServekitError naming the file and key."""

from __future__ import annotations

import json

import pytest

from servekit.errors import ServekitError
from servekit.facts import shipped_facts, shipped_model_ids
from servekit.facts.locate import facts_from_path_or_cache
from servekit.facts.model import ModelFacts


def _good() -> dict:
    return shipped_facts("Qwen/Qwen3.8-27B").to_json()


def test_every_shipped_file_round_trips():
    for model_id in shipped_model_ids():
        facts = shipped_facts(model_id)
        assert ModelFacts.from_json(json.loads(json.dumps(facts.to_json()))) == facts


def test_json_leaves_out_none_and_writes_tuples_as_lists():
    doc = _good()
    assert "mla" not in doc and isinstance(doc["layers"], list)
    assert isinstance(doc["linear"]["split_heads"], list)
    assert isinstance(ModelFacts.from_json(doc).linear.split_heads, tuple)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda d: d.update(num_kv_head=4), "'num_kv_head'"),
        (lambda d: d.update(num_kv_heads="8"), "'num_kv_heads'"),
        (lambda d: d.update(num_kv_heads=True), "'num_kv_heads'"),
        (lambda d: d.pop("head_dim"), "'head_dim'"),
        (lambda d: d["layers"].__setitem__(3, "dense"), "'layers[3]'"),
        (lambda d: d["linear"].update(conv_kernel=None), "'linear.conv_kernel'"),
        (lambda d: d["linear"].update(extra=1), "'linear.extra'"),
        (lambda d: d.update(weights=[1]), "'weights'"),
    ],
)
def test_bad_facts_file_names_the_file_and_key(tmp_path, edit, key):
    doc = _good()
    edit(doc)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ServekitError) as caught:
        facts_from_path_or_cache(str(path))
    assert str(path) in str(caught.value) and key in str(caught.value)
