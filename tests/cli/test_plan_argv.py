"""A plain ``servekit plan ...`` is read without typer (``servekit.cli.plan_argv``), to the same
options typer reads from it; every other command line, help and usage error is typer's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer

from servekit.cli import plan_cmd
from servekit.cli.app import build_app, main
from servekit.errors import SelectionError
from servekit.cli.plan_argv import COMPLETION_ENV, FLAG, FLOAT, INTEGER, LIST, OPTIONS, STRING, TYPER_ONLY, plain_plan

QWEN = "Qwen/Qwen3.8-27B"
CLICK_KINDS = {"str": STRING, "text": STRING, "int": INTEGER, "integer": INTEGER, "float": FLOAT}


def _click_plan():
    return typer.main.get_command(build_app(["plan"])).commands["plan"]


def _typer_options(argv: list[str], monkeypatch) -> object:
    """The ``PlanOptions`` typer builds from ``argv`` (the command itself is not run)."""
    seen = []
    monkeypatch.setattr(plan_cmd, "run_plan", lambda opts: seen.append(opts) or 0)
    assert build_app(argv)(args=argv, prog_name="servekit", standalone_mode=False) == 0
    (opts,) = seen
    return opts


def test_the_plain_reader_knows_exactly_the_options_typer_registers():
    found = {}
    for param in _click_plan().params:
        if param.param_type_name == "argument":
            assert param.name == "model"
            continue
        if param.name == "help" or set(param.opts) <= set(TYPER_ONLY):
            continue
        kind = LIST if param.multiple else FLAG if param.is_flag else CLICK_KINDS[param.type.name]
        for opt in param.opts:
            found[opt] = (param.name, kind, True if kind == FLAG else None)
        for opt in param.secondary_opts:
            found[opt] = (param.name, kind, False)
    assert found == OPTIONS


@pytest.mark.parametrize("argv", [
    ["plan", QWEN],
    ["plan", QWEN, "--format", "json"],
    ["plan", "--format=json", QWEN, "--hardware", "h100"],
    ["plan", QWEN, "--feature", "spec_decoding", "--mode", "spec_decoding=dflash", "--feature", "long_context",
     "--no-feature", "reasoning", "--no-checks", "--docker", "--format", "sh"],
    ["plan", QWEN, "--tp", "2", "--pp=1", "--nodes", " 1", "--port", "9000", "--gpu-memory-utilization", "0.85",
     "--max-model-len", "8192", "--image", "x/y:z", "--vllm-version", "0.32.0", "--checks"],
    ["plan", QWEN, "--format", "k8s", "--namespace", "ns", "--name", "n", "--storage-class", "fast",
     "--cache-size", "1Ti", "--engine", "max", "--target", "cuda:sm_90", "--devices", "0,1", "--catalog", "."],
    ["plan", "--batch", "-", "--catalog="],
    ["plan", QWEN, "--hardware", "-x", "--variant", "fp8", "--strategy", "s", "--kv-offload", "k", "--task", "t",
     "--qaic-mode", "aot"],
    ["plan", "--hardware", "local"],
])
def test_plain_arguments_are_read_as_typer_reads_them(argv, monkeypatch):
    assert plain_plan(argv, environ={}) == _typer_options(argv, monkeypatch)


@pytest.mark.parametrize("argv", [
    [], ["--version"], ["--help"], ["fit", QWEN], ["plan", "--help"], ["plan", QWEN, "--help"],
    ["plan", QWEN, "--hardware", "--help"], ["plan", QWEN, "extra"], ["plan", QWEN, "--nodes", "two"],
    ["plan", QWEN, "--gpu-memory-utilization", "most"], ["plan", QWEN, "--docker=yes"], ["plan", QWEN, "--hardware"],
    ["plan", QWEN, "--", "--tp"], ["plan", QWEN, "--hw", "h100"], ["plan", "-"], ["plan", QWEN, "-h"],
    ["plan", QWEN, "--tp", "2", "--tp", "4"], ["plan", QWEN, "--checks", "--no-checks"],
    ["plan", QWEN, "--hardware", "h100", "--slo", "ttft_ms=500", "--workload", "1024:1024:64"],
    ["plan", QWEN, "--hardware", "h100", "--workload=1024:1024:64"],
])
def test_everything_else_is_left_to_typer(argv):
    assert plain_plan(argv, environ={}) is None


def test_the_options_left_to_typer_are_options_of_plan():
    opts = {opt for param in _click_plan().params for opt in param.opts}
    assert set(TYPER_ONLY) <= opts and not set(TYPER_ONLY) & set(OPTIONS)


def test_shell_completion_is_left_to_typer():
    assert plain_plan(["plan", QWEN], environ={COMPLETION_ENV: "bash_complete"}) is None


def test_typer_still_answers_help_and_usage_errors(capsys):
    assert main(["plan", "--help"]) == 0
    assert "--gpu-memory-utilization" in capsys.readouterr().out
    assert main(["plan", QWEN, "--nodes", "two"]) == 2
    assert "Invalid value for '--nodes': 'two' is not a valid int" in capsys.readouterr().err
    assert main(["plan", QWEN, "--hw", "h100"]) == 2
    assert "No such option: --hw" in capsys.readouterr().err


def test_a_plain_unknown_format_is_the_same_error_either_way(capsys):
    argv = ["plan", QWEN, "--format", "yaml"]
    assert main(argv) == 1
    plain = capsys.readouterr().err
    with pytest.raises(SelectionError) as typer_path:
        build_app(argv)(args=argv, prog_name="servekit", standalone_mode=False)
    assert plain == f"error: {typer_path.value.message}\n"
    assert plain.startswith("error: unknown format 'yaml'; valid choices: text, json, sh, k8s")


@pytest.mark.parametrize("form", ["json", "text", "sh"])
def test_a_cold_plan_imports_no_cli_framework_nor_web_stack(form, tmp_path):
    code = ("import sys; from servekit.cli import run\n"
            f"sys.argv = ['servekit', 'plan', {QWEN!r}, '--format', {form!r}]\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(' '.join(sorted(sys.modules)))")
    env = {**os.environ, "SERVEKIT_HOME": str(tmp_path / "home")}
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)  # parses the catalog
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    if form == "json":
        assert json.loads(done.stdout)["argv"][:2] == ["vllm", "serve"]
    else:
        assert "vllm serve" in done.stdout
    modules = done.stderr.split()
    unused = ("typer", "click", "rich", "fastapi", "uvicorn", "starlette", "httpx", "pydantic", "huggingface_hub",
              "ruamel", "servekit.cli.typer_app", "servekit.cli.plan_cmd",
              # what the upgrade check, other engines' translation and warm-cache use; past catalogs' gzip
              "servekit.engines.common.upgrade_table", "servekit.engines.vllm.upgrades",
              "servekit.engines.common.translation", "servekit.engines.common.user_install",
              "servekit.engines.common.artifacts", "servekit.engines.vllm.artifacts", "gzip",
              # what only KV stores and offload, the search for a layout that fits, JSON config
              # values and YAML dates need
              "servekit.catalog.domain.kv_store", "servekit.catalog.domain.kv_offload",
              "servekit.synthesis.layouts", "servekit.engines.vllm.config_values", "datetime")
    assert [m for m in modules if any(m == u or m.startswith(u + ".") for u in unused)] == []


class _GoneReader:
    """A stdout whose reader went away (``servekit plan ... | head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_went_away_is_exit_1_either_way(monkeypatch, capsys):
    """Typer answers EPIPE with exit 1 and no traceback; so does the plain path (the same plan
    with an option given twice goes to typer)."""
    plain, twice = ["plan", QWEN, "--format", "json"], ["plan", QWEN, "--format", "json", "--format", "json"]
    assert plain_plan(twice, environ={}) is None
    monkeypatch.setattr(sys, "stdout", _GoneReader())
    codes = [main(plain), main(twice)]
    monkeypatch.undo()
    assert codes == [1, 1]
    assert "internal error" not in capsys.readouterr().err
