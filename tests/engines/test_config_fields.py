"""Keys and values inside vLLM's JSON-valued options, at every level, against its config classes."""

from __future__ import annotations

import shlex

import pytest

from servekit.engines.lint import lint_argv
from servekit.engines.vllm.config_fields import load_config_fields


def _codes(command: str) -> list[str]:
    return [f.code for f in lint_argv("vllm", "0.32.0", shlex.split(command)).errors]


def test_tree_is_stored_for_the_pinned_version() -> None:
    tree = load_config_fields("0.32.0")
    assert tree is not None
    assert tree.flags["--compilation-config"]["class"] == "CompilationConfig"
    assert tree.classes["CompilationConfig"]["fields"]["pass_config"]["class"] == "PassConfig"
    assert tree.classes["KVTransferConfig"]["requires"]["kv_connector"][0]["with"] == ["kv_role"]
    assert load_config_fields("0.0.1") is None


@pytest.mark.parametrize("command", [
    """vllm serve m --compilation-config '{"pass_config": {"no_such_key": true}}'""",
    "vllm serve m --compilation-config.pass_config.no_such_key true",
    """vllm serve m --attention-config '{"hisparse_config": {"bogus": 1}}'""",
    """vllm serve m --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "bogus": 1}'""",
])
def test_unknown_nested_keys_are_errors(command: str) -> None:
    assert _codes(command) == ["unknown-config-key"]


def test_fix_names_the_closest_key() -> None:
    (finding,) = lint_argv("vllm", None, shlex.split(
        "vllm serve m --compilation-config.pass_config.fuse_norm_quantt true")).errors
    assert finding.fix == "did you mean pass_config.fuse_norm_quant?"


def test_nested_value_kinds_are_checked() -> None:
    assert _codes("""vllm serve m --compilation-config '{"pass_config": {"fuse_norm_quant": "maybe"}}'""") == [
        "bad-config-value"]
    assert _codes("""vllm serve m --compilation-config '{"pass_config": {"fuse_norm_quant": true}}'""") == []


@pytest.mark.parametrize(("config", "codes"), [
    ('{"kv_connector": "NixlConnector"}', ["missing-config-key"]),
    ('{"kv_connector": "NixlConnector", "kv_role": "kv_both"}', []),
    ('{"kv_role": "kv_producer"}', []),
    ("{}", []),
])
def test_kv_connector_needs_kv_role(config: str, codes: list[str]) -> None:
    assert _codes(f"vllm serve m --kv-transfer-config '{config}'") == codes


def test_dotted_kv_connector_without_role() -> None:
    assert _codes("vllm serve m --kv-transfer-config.kv_connector NixlConnector") == ["missing-config-key"]


def test_top_level_unknown_key_is_reported_once() -> None:
    assert _codes("""vllm serve m --compilation-config '{"no_such_key": 1}'""") == ["unknown-key"]


def test_valid_nested_configs_pass() -> None:
    assert _codes("""vllm serve m --compilation-config '{"mode": 3, "pass_config": {"eliminate_noops": true}}' """
                  """--speculative-config '{"method": "ngram", "num_speculative_tokens": 3}'""") == []
