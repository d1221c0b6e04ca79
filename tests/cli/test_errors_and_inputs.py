"""One rule for errors everywhere, inputs read one way, and nothing ignored without a word."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("extra", [
    ["--engine", "vllm-ascend", "--hardware", "h200"],
    ["--engine", "vllm-qaic"],
    ["--hardware", "ai100_ultra", "--engine", "max"],
    ["--engine", "vllm-qaic", "--hardware", "ai100_ultra", "--qaic-mode", "jit"],
])
def test_engine_errors_go_to_stderr_and_no_fit_is_claimed(capsys, extra):
    code, out, err = run(capsys, "plan", LLAMA, *extra)
    assert code == 1
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and "(fix: " in err, err
    assert "fits" not in out


def test_json_errors_are_an_object_on_stdout_too(capsys):
    code, out, err = run(capsys, "plan", LLAMA, "--engine", "vlm", "--format", "json")
    assert code == 1 and "closest known engine is 'vllm'" in err
    doc = json.loads(out)
    assert "unknown engine 'vlm'" in doc["error"] and doc["fix"]


def test_a_usage_error_under_format_json_is_an_object_too(capsys):
    code, out, err = run(capsys, "plan", LLAMA, "--no-such-option", "--format", "json")
    assert code == 2 and "No such option" in json.loads(out)["error"]


@pytest.mark.parametrize(("args", "expected"), [
    (["plan", LLAMA, "--batch", "x.jsonl"], "MODEL 'meta-llama/Llama-3.1-8B-Instruct' and --batch both given"),
    (["plan", LLAMA, "--target", "cuda:sm_90"], "--target only applies to engines that translate the plan"),
    (["warm-cache", LLAMA, "--command", "vllm serve x", "--dry-run"], "and --command both given"),
    (["warm-cache", "--command", "vllm serve /missing/model", "--dry-run"], "local path /missing/model does not exist"),
    (["lint", "--", "llama-server", "-m", "x"], "'llama-server' is not the program of an engine"),
    (["catalog", "validate", "/missing/catalog"], "servekit catalog validate DIR"),
])
def test_ignored_or_wrong_input_is_an_error(capsys, args, expected):
    code, out, err = run(capsys, *args)
    assert code == 1 and expected in err and len(err.strip().splitlines()) == 1, err


def test_lint_reads_one_quoted_command_as_its_words(capsys):
    code, out, err = run(capsys, "lint", "--", "vllm serve m --bogus-flag")
    assert code == 1 and "--bogus-flag" in out and "invalid" in out


@pytest.mark.parametrize(("args", "what"), [
    (["plan", "--batch"], "batch file"), (["fit", "--points"], "points file"), (["lint", "--batch"], "batch file"),
])
def test_utf16_input_is_one_error_for_every_line_command(capsys, tmp_path, args, what):
    path = tmp_path / "in.jsonl"
    path.write_bytes('{"recipe": "x"}\n'.encode("utf-16"))
    code, out, err = run(capsys, *args, str(path))
    assert code == 1 and out == ""
    assert f"the {what} {path} is UTF-16" in err and "iconv -f UTF-16 -t UTF-8" in err


def test_a_utf8_byte_order_mark_is_skipped(capsys, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"engine": "vllm", "command": "vllm serve org/model"}\n')
    code, out, err = run(capsys, "lint", "--batch", str(path))
    assert code == 0 and json.loads(out)["valid"], err


def test_a_batch_whose_every_line_failed_exits_1(capsys, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"recipe": "Nope/Model"}\n[1]\n', encoding="utf-8")
    code, out, err = run(capsys, "plan", "--batch", str(path))
    assert code == 1 and len(out.splitlines()) == 2 and "every line of the batch file failed" in err
