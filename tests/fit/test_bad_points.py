"""A malformed kv-points line (or model file) is one clear error line, never a crash."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main
from servekit.app.fit import predict_points


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{bad", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ("{}", "no config_facts"),
        ('{"config_facts": "x"}', "config_facts must be a JSON object"),
        ('{"config_facts": {}}', "config_facts lacks 'num_hidden_layers'"),
    ],
)
def test_each_bad_line_is_an_error_object(line, says):
    (result,) = predict_points([line])
    assert result["error"].startswith("line 1: ") and says in result["error"]


def test_bad_lines_do_not_stop_the_good_ones():
    results = list(predict_points(['{"config_facts": 3}', "", "[]"]))
    assert [r["error"][:7] for r in results] == ["line 1:", "line 3:"]


def test_non_utf8_model_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "facts.json"
    path.write_bytes(b"\xff\xfe{}")
    code = main(["fit", str(path), "--hardware", "h200"])
    err = capsys.readouterr().err
    assert code == 1 and "not UTF-8 text" in err and str(path) in err


def test_points_cli_writes_error_lines(tmp_path, capsys):
    path = tmp_path / "points.jsonl"
    path.write_text('{"config_facts": "x"}\n', encoding="utf-8")
    main(["fit", "--points", str(path)])
    assert "config_facts must be" in json.loads(capsys.readouterr().out)["error"]
