"""Lint on the stored catalogs: no engine needed."""

from __future__ import annotations

import json
import shlex

import pytest

from servekit.cli.app import main
from servekit.engines.lint import lint_argv, lint_batch, lint_shell
from servekit.errors import ServekitError
from servekit.jsonl import objects


def codes(command: str, engine: str = "vllm") -> list[str]:
    return [f.code for f in lint_argv(engine, None, shlex.split(command)).findings]


def errors(command: str, engine: str = "vllm") -> list[str]:
    return [f.code for f in lint_argv(engine, None, shlex.split(command)).errors]


def test_a_plain_recipe_command_is_valid() -> None:
    result = lint_argv("vllm", "0.32.0", shlex.split(
        "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 32768 "
        "--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3"))
    assert result.valid and result.findings == ()
    assert result.version == "0.32.0"


def test_typo_gets_the_closest_current_name() -> None:
    result = lint_argv("vllm", None, shlex.split("vllm serve m --gpu-memory-utilisation 0.9"))
    (finding,) = result.findings
    assert finding.code == "unknown-option" and finding.fix == "did you mean --gpu-memory-utilization?"


def test_wrong_dash_count_points_at_the_short_alias() -> None:
    (finding,) = lint_argv("vllm", None, ["vllm", "serve", "m", "--tp", "2"]).findings
    assert finding.fix == "did you mean -tp (--tensor-parallel-size)?"


def test_removed_flag_names_its_replacement() -> None:
    (finding,) = lint_argv("vllm", None, shlex.split("vllm serve m --disable-log-requests")).findings
    assert finding.code == "renamed-option" and "--no-enable-log-requests" in finding.fix


def test_prefix_abbreviation_works_but_is_flagged() -> None:
    result = lint_argv("vllm", None, shlex.split("vllm serve m --max-num-seq 8"))
    assert result.valid
    assert [f.code for f in result.findings] == ["abbreviated-option"]
    assert result.findings[0].fix == "write --max-num-seqs"


def test_ambiguous_prefix_is_an_error() -> None:
    assert errors("vllm serve m --max-num 8") == ["ambiguous-option"]


def test_underscores_and_equals_are_normalised_like_vllm() -> None:
    assert codes("vllm serve m --max_model_len=4096 -tp=2 --enable_prefix_caching") == []


@pytest.mark.parametrize(("command", "code"), [
    ("vllm serve m --dtype bf16", "bad-choice"),
    ("vllm serve m --kv-cache-dtype FP8", "bad-choice"),
    ("vllm serve m --port 80x", "bad-type"),
    ("vllm serve m --max-model-len 1.5K", "bad-type"),
    ("vllm serve m --speculative-config '{method: ngram}'", "bad-json"),
    ("vllm serve m --compilation-config '{\"levle\": 3}'", "unknown-key"),
    ("vllm serve m --compilation-config '{\"mode\": 3'", "bad-json"),
    ("vllm serve m --enable-prefix-caching=true", "unexpected-value"),
    ("vllm serve m --port", "missing-value"),
    ("vllm serve m extra", "unexpected-argument"),
    ("vllm serve m --enable-auto-tool-choice", "missing-requirement"),
    ("vllm serve m --enable-auto-tool-choice --tool-call-parser hermez", "unknown-tool-call-parser"),
    ("vllm serve m --reasoning-parser qwen9", "unknown-reasoning-parser"),
    ("vllm serve m --load-format gguf2", "unknown-load-format"),
    ("vllm serve m --tokenizer-mode slow", "unknown-tokenizer-mode"),
    ("vllm serve m --attention-backend flash", "unknown-attention-backend"),
    ("vllm serve m --quantization fp9", "unknown-quantization-method"),
    ("vllm serve --served-model-name x", "model-not-first"),
    ("vllm serve m --config settings.toml", "bad-config-file"),
])
def test_each_kind_of_error(command: str, code: str) -> None:
    assert code in errors(command)


@pytest.mark.parametrize("command", [
    "vllm serve m --max-model-len 1k",
    "vllm serve m --max-model-len auto",
    "vllm serve m --compilation-config.mode 3 -O3",
    "vllm serve m --compilation-config '{\"max_cudagraph_capture_size\": 1k}'",
    "vllm serve m --hf-overrides plainstring",
    "vllm serve m --attention-backend flash_attn --load-format SAFETENSORS --moe-backend Triton",
    "vllm serve m --served-model-name a b --seed -1",
    "vllm serve --model m --served-model-name x",
    "python3 -m vllm.entrypoints.openai.api_server --model m --port 8001",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve m --max-model-len 1000000",
])
def test_spellings_vllm_accepts(command: str) -> None:
    result = lint_argv("vllm", None, shlex.split(command))
    assert result.valid, [str(f) for f in result.errors]


def test_docker_run_commands_are_read_through_the_image() -> None:
    command = ("docker run --gpus all --ipc=host -p 8000:8000 -v ~/.cache/huggingface:/root/.cache/huggingface "
               "-e VLLM_USE_V1=1 vllm/vllm-openai:latest Qwen/Qwen3-8B --tensor-parallel-size 2 --dtype bf16")
    result = lint_argv("vllm", None, shlex.split(command))
    assert [f.code for f in result.errors] == ["bad-choice"] and result.errors[0].option == "--dtype"
    from servekit.engines.registry import get_engine

    split = get_engine("vllm").split_command(shlex.split(command))
    assert split.form == "docker" and ("VLLM_USE_V1", "1") in split.env
    assert split.args[:3] == ("Qwen/Qwen3-8B", "--tensor-parallel-size", "2")
    # an image without an entrypoint gets the full command
    inner = "docker run --rm img:1 vllm serve m --port 8001"
    assert lint_argv("vllm", None, shlex.split(inner)).valid


def test_unknown_config_keys_name_the_known_ones() -> None:
    result = lint_argv("vllm", None, ["vllm", "serve", "m", "--compilation-config", '{"use_inductor": false}'])
    (finding,) = result.errors
    assert finding.code == "unknown-key" and "use_inductor_graph_partition" in finding.message
    assert "cudagraph_mode" in finding.fix


def test_shell_placeholders_are_not_type_checked() -> None:
    result = lint_argv("vllm", None, shlex.split("vllm serve m --data-parallel-rpc-port '$RPC_PORT'"))
    assert result.valid and [f.code for f in result.findings] == ["shell-value"]


def test_a_missing_model_is_a_warning_naming_the_default() -> None:
    result = lint_argv("vllm", None, ["vllm", "serve", "--port", "8001"])
    assert result.valid and [f.code for f in result.findings] == ["no-model"]
    assert "Qwen/Qwen3-0.6B" in result.findings[0].message


def test_an_option_glued_to_its_value_is_named() -> None:
    result = lint_argv("vllm", None, ["vllm", "serve", "m", "--max-model-len auto"])
    (finding,) = result.errors
    assert finding.code == "option-and-value-in-one-word" and finding.option == "--max-model-len"


def test_conflicting_duplicates_warn_and_the_last_wins() -> None:
    result = lint_argv("vllm", None, shlex.split("vllm serve m --port 8000 --port 8001"))
    assert result.valid and [f.code for f in result.findings] == ["conflicting-duplicate"]
    same = lint_argv("vllm", None, shlex.split("vllm serve m --port 8000 --port 8000"))
    assert [f.code for f in same.findings] == ["repeated-option"]


def test_unknown_tool_parser_without_auto_choice_is_only_a_warning() -> None:
    result = lint_argv("vllm", None, shlex.split("vllm serve m --tool-call-parser hermez"))
    assert result.valid and [f.code for f in result.findings] == ["unused-option"]
    assert "hermes" in result.findings[0].fix


def test_model_option_moves_to_the_front_like_vllm_serve() -> None:
    # vllm serve moves --model to the positional slot, so a second model is an extra argument
    assert "unexpected-argument" in errors("vllm serve m --model n")
    # the API-server module reads --model as an ordinary option
    assert errors("python -m vllm.entrypoints.openai.api_server --model n") == []


@pytest.mark.parametrize(("command", "code"), [
    ("max serve --model m --devices tpu", "bad-type"),
    ("max serve --model m --max-length 4k", "bad-type"),
    ("max serve --model m --max-len 4096", "unknown-option"),
    ("max serve --model m --max_length 4096", "unknown-option"),  # click does not fold underscores
    ("max serve --model m --quantization-encoding bf16", "bad-choice"),
    ("max serve --model m --eager-usage-validator init-only", "bad-choice"),
    ("max serve --model m --models '{bad'", "bad-json"),
    ("max serve --model m --enable-prefix-caching=true", "unexpected-value"),
    ("max serve --model m --port --devices", "bad-type"),  # click takes the next word as the value
    ("max serve --model m extra", "unexpected-argument"),
    ("max warm-cache --model m --port 8000", "unknown-option"),  # serve-only option
])
def test_max_errors(command: str, code: str) -> None:
    assert code in errors(command, "max")


def test_max_accepts_case_folded_choices_and_device_lists() -> None:
    for command in ("max serve --model m --quantization-encoding BFLOAT16 --task TEXT_GENERATION",
                    "max serve --model m --devices gpu:0,1 --no-enable-prefix-caching",
                    "max warm-cache --model m --devices cpu --target cuda:sm_90"):
        assert lint_argv("max", "26.7.0", shlex.split(command)).valid, command


def test_unknown_engine_and_version_are_clear_errors() -> None:
    with pytest.raises(ServekitError, match="unknown engine"):
        lint_argv("tgi", None, ["serve"])
    with pytest.raises(ServekitError, match="no flag catalog for vllm 0.1.0"):
        lint_argv("vllm", "0.1.0", ["vllm", "serve", "m"])


def test_shell_lines_with_continuations() -> None:
    result = lint_shell("vllm", None, "vllm serve m \\\n  --max-model-len 4096 \\\n  --dtype bf16")
    assert [f.code for f in result.errors] == ["bad-choice"]
    with pytest.raises(ServekitError, match="quoting"):
        lint_shell("vllm", None, "vllm serve 'unterminated")


def test_batch_keeps_order_and_reports_bad_lines() -> None:
    lines = [
        json.dumps({"engine": "vllm", "command": "vllm serve m --tp 2"}),
        json.dumps({"engine": "max", "command": "max serve --model m"}),
        "not json",
        "",
        json.dumps({"engine": "vllm", "command": "vllm serve m"}),
        json.dumps({"engine": "vllm", "argv": ["vllm", "serve", "m", "--dtype", "bf16"]}),
        json.dumps({"engine": "vllm"}),
    ]
    out = lint_batch(lines)
    assert [o["valid"] for o in out] == [False, True, False, True, False, False]
    assert out[4]["findings"][0]["code"] == "bad-choice" and "line 7" in out[5]["error"]
    assert out[0]["findings"][0]["code"] == "unknown-option"
    assert "line 3" in out[2]["error"]


def test_cli_exit_codes_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--", "vllm", "serve", "m", "--max-model-len", "4096"]) == 0
    assert "valid" in capsys.readouterr().out
    assert main(["lint", "--format", "json", "--", "max", "serve", "--model", "m", "--devices", "tpu"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["valid"] is False and payload["engine"] == "max"
    assert main(["lint", "--engine", "nope", "--", "x"]) == 1


def test_cli_batch(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "cmds.jsonl"
    batch.write_text(json.dumps({"engine": "vllm", "command": "vllm serve m"}) + "\n"
                     + json.dumps({"engine": "vllm", "command": "vllm serve m --dtype bf16"}) + "\n")
    assert main(["lint", "--batch", str(batch)]) == 1
    rows = objects(capsys.readouterr().out.splitlines())
    assert [r["valid"] for r in rows] == [True, False]
