"""``servekit catalog validate``: text and JSON output, exit codes, default catalog."""

from __future__ import annotations

import json

from catalog.conftest import RECIPE_PATH, line_of
from servekit.cli.app import main


def test_clean_catalog_exits_zero(mini, capsys):
    assert main(["catalog", "validate", str(mini.root)]) == 0
    out = capsys.readouterr().out
    assert "ok: 0 error(s), 0 warning(s)" in out


def test_warnings_are_printed_but_do_not_fail(mini, capsys):
    text = mini.replace(RECIPE_PATH, "    precision: bf16\n", "    precision: bf16\n    colour: blue\n")
    assert main(["catalog", "validate", str(mini.root)]) == 0
    out = capsys.readouterr().out
    line = line_of(text, "colour: blue")
    assert (
        f"{mini.root / RECIPE_PATH}:{line}:5: variants.default.colour: warning: unknown key 'colour'" in out
    )
    assert "1 warning(s)" in out


def test_errors_exit_one_with_file_line_key_message_and_fix(mini, capsys):
    text = mini.replace(RECIPE_PATH, "  architecture: dense\n", "  architecture: hybrid\n")
    assert main(["catalog", "validate", str(mini.root)]) == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "architecture" in ln]
    expected_prefix = f"{mini.root / RECIPE_PATH}:{line_of(text, 'hybrid')}:17: model.architecture: "
    assert len(lines) == 1 and lines[0].startswith(expected_prefix)
    assert "(fix: use one of 'dense' or 'moe')" in lines[0]


def test_json_format(mini, capsys):
    text = mini.replace(RECIPE_PATH, "      hopper:\n", "      hoper:\n")
    assert main(["catalog", "validate", str(mini.root), "--format", "json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["ok"] is False and payload["errors"] == 1 and payload["warnings"] == 0
    (finding,) = payload["findings"]
    assert finding["severity"] == "error"
    assert finding["file"] == str(mini.root / RECIPE_PATH)
    assert finding["line"] == line_of(text, "hoper:")
    assert finding["key_path"] == "variants.fp8.hardware_overrides.hoper"
    assert finding["key_parts"] == ["variants", "fp8", "hardware_overrides", "hoper"]
    assert finding["fix"]


def test_catalog_from_environment(mini, monkeypatch, capsys):
    mini.replace(
        RECIPE_PATH,
        "compatible_strategies: [single_node_tp, multi_node_tp]",
        "compatible_strategies: [single_node_tp, nope]",
    )
    monkeypatch.setenv("SERVEKIT_CATALOG", str(mini.root))
    assert main(["catalog", "validate"]) == 1
    assert "unknown strategy 'nope'" in capsys.readouterr().out


def test_bundled_catalog_is_the_default(capsys):
    assert main(["catalog", "validate"]) == 0
    assert "catalog_data: ok:" in capsys.readouterr().out


def test_missing_directory_is_one_line_error(tmp_path, capsys):
    assert main(["catalog", "validate", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "does not exist" in err and "Traceback" not in err


def test_directory_without_taxonomy_is_a_finding(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["catalog", "validate", str(tmp_path / "empty")]) == 1
    assert "catalog has no taxonomy.yaml" in capsys.readouterr().out


def test_strict_fails_on_warnings(mini, capsys):
    mini.replace(RECIPE_PATH, "    precision: bf16\n", "    precision: bf16\n    colour: blue\n")
    assert main(["catalog", "validate", str(mini.root), "--strict"]) == 1
    assert "FAILED: 0 error(s), 1 warning(s)" in capsys.readouterr().out
