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
        ("[1, 2]", "each line must be a JSON object"),
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


def test_numbers_written_as_text_are_read_as_numbers():
    from servekit.fit.points import predict_point

    base = {"config_facts": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                             "head_dim": 128, "hidden_size": 4096, "vocab_size": 128256},
            "gpu": "NVIDIA H100 80GB HBM3", "gpu_mem_gib": 79.19, "tp": 1, "gpu_memory_utilization": 0.9,
            "max_model_len": 8192, "weights_gib": 14.99, "vllm_version": "0.19.0"}
    as_text = {**base, "gpu_mem_gib": "79.19", "gpu_memory_utilization": "0.9", "max_model_len": "8k",
               "weights_gib": "14.99", "config_facts": {**base["config_facts"], "hidden_size": "4096"}}
    assert predict_point(as_text) == predict_point({**base, "max_model_len": 8192})


def test_a_field_that_is_not_a_number_is_one_clear_error():
    import pytest

    from servekit.fit.point_fields import PointError
    from servekit.fit.points import predict_point

    with pytest.raises(PointError, match="gpu_memory_utilization"):
        predict_point({"config_facts": {"num_hidden_layers": 2, "num_attention_heads": 2}, "gpu_memory_utilization": "most"})
    with pytest.raises(PointError, match="num_hidden_layers"):
        predict_point({"config_facts": {"num_attention_heads": 2}})
