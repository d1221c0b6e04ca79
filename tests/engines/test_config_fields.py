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


@pytest.mark.parametrize("version", ["0.32.0", "0.33.0"])
def test_issue_values_are_errors_naming_key_value_and_what_it_takes(version: str) -> None:
    result = lint_argv("vllm", version, shlex.split(
        """vllm serve m --speculative-config '{"method": "ngram", "num_speculative_tokens": "three"}' """
        """--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLYY"}'"""))
    tokens, mode = result.errors
    assert (tokens.code, mode.code) == ("bad-config-value", "bad-config-choice")
    assert "num_speculative_tokens" in tokens.message and '"three"' in tokens.message and "takes int" in tokens.message
    assert "cudagraph_mode" in mode.message and '"FULL_DECODE_ONLYY"' in mode.message
    assert mode.fix is not None and mode.fix.startswith("use one of: FULL_DECODE_ONLY, ")
    assert "FULL_AND_PIECEWISE" in mode.fix


@pytest.mark.parametrize(("config", "codes"), [
    ('{"cudagraph_mode": "full_decode_only"}', []),  # the enum's names in any case, as vLLM upper-cases them
    ('{"cudagraph_mode": 2}', []),
    ('{"cudagraph_mode": 7}', ["bad-config-choice"]),  # not a value of the enum
    ('{"cudagraph_mode": [2]}', ["bad-config-value"]),
    ('{"mode": "VLLM_COMPILE"}', []),
    ('{"cudagraph_capture_sizes": [1, 2, 4]}', []),
    ('{"cudagraph_capture_sizes": [1, "a"]}', ["bad-config-value"]),
    ('{"cudagraph_capture_sizes": 4}', ["bad-config-value"]),
    ('{"max_cudagraph_capture_size": 1k}', []),
    ('{"compile_cache_save_format": "binary"}', []),
    ('{"compile_cache_save_format": "binry"}', ["bad-config-choice"]),
])
def test_compilation_config_values(config: str, codes: list[str]) -> None:
    assert _codes(f"vllm serve m --compilation-config '{config}'") == codes


@pytest.mark.parametrize(("config", "codes"), [
    ('{"method": "ngram", "num_speculative_tokens": "3"}', []),  # pydantic reads a numeric string as int
    ('{"method": "ngram", "num_speculative_tokens": 3.0}', []),
    ('{"method": "ngram", "num_speculative_tokens": 2.5}', ["bad-config-value"]),
    ('{"method": "ngram", "num_speculative_tokens": 0}', ["bad-config-value"]),  # gt 0
    ('{"method": "ngram", "num-speculative-tokens": 2}', []),  # the engine writes key dashes as underscores
    ('{"method": "ngrm", "num_speculative_tokens": 3}', ["bad-config-choice"]),
    ('{"method": "ngram", "prompt_lookup_max": "four"}', ["bad-config-value"]),
    ('{"method": "ngram", "synthetic_acceptance_rates": [0.5, "x"]}', ["bad-config-value"]),
    ('{"method": "eagle", "model": "org/drafter", "num_speculative_tokens": 2, "draft_tensor_parallel_size": 1}', []),
])
def test_speculative_config_values(config: str, codes: list[str]) -> None:
    assert _codes(f"vllm serve m --speculative-config '{config}'") == codes


def test_choice_fix_puts_the_closest_first() -> None:
    (finding,) = lint_argv("vllm", "0.32.0", shlex.split(
        """vllm serve m --speculative-config '{"method": "eagel3", "num_speculative_tokens": 2}'""")).errors
    assert finding.fix is not None and finding.fix.startswith("use one of: eagle3, eagle")


def test_every_option_class_has_typed_fields() -> None:
    """The tree says what each top-level field takes for every option (the extraction measured them)."""
    for version in ("0.32.0", "0.33.0"):
        tree = load_config_fields(version)
        assert tree is not None
        for flag, entry in tree.flags.items():
            fields = tree.classes[entry["class"]]["fields"]
            typed = [name for name, field in fields.items() if "kinds" in field and "type" in field]
            assert typed, (version, flag)
            assert len(typed) >= len(fields) // 2, (version, flag, sorted(set(fields) - set(typed)))


def test_rename_hint_comes_from_the_release_in_use() -> None:
    """0.33's --disable-prefix-caching is --no-enable-prefix-caching in 0.32, never its opposite."""
    (finding,) = lint_argv("vllm", "0.32.0", ["vllm", "serve", "m", "--disable-prefix-caching"]).errors
    assert finding.code == "unknown-option"
    assert finding.fix == "write --no-enable-prefix-caching"
    assert "0.33.0" in finding.message
    assert lint_argv("vllm", "0.33.0", ["vllm", "serve", "m", "--disable-prefix-caching"]).valid
