"""The upgrade check (``servekit.engines.upgrade``) against the stored vLLM, SGLang and MAX catalogs.

The 0.32.0 -> 0.33.0 pair is read from both catalogs (0.33 renames the negative forms and drops
two ``--spec-method`` choices); an upgrade from a release with no stored catalog is read from
the newer catalog and the engine's table of known changes.
"""

from __future__ import annotations

import json
import shlex

import pytest

from servekit.cli.app import main
from servekit.engines.registry import get_engine
from servekit.engines.upgrade import check_upgrade
from servekit.errors import ServekitError

VLLM = get_engine("vllm")


def _check(old: str, new: str, command: str, engine: str = "vllm"):
    return check_upgrade(get_engine(engine), old, new, shlex.split(command))


def _codes(report) -> dict[str | None, set[str]]:
    out: dict[str | None, set[str]] = {}
    for s in report.findings:
        out.setdefault(s.finding.option, set()).add(s.finding.code)
    return out


def _passes(report, engine: str = "vllm") -> bool:
    words = shlex.split(report.rewritten)
    assert shlex.join(words) == report.rewritten
    return get_engine(engine).lint(words, report.checked_new).valid


def test_a_negative_form_033_renamed_still_parses_and_is_rewritten():
    report = _check("0.32.0", "0.33.0", "vllm serve Qwen/Qwen3-8B --no-enable-prefix-caching --no-enable-log-requests")
    assert report.ok
    found = {s.finding.option: s.finding for s in report.findings if s.finding.code == "renamed-option"}
    assert found["--no-enable-prefix-caching"].severity == "warning"
    assert found["--no-enable-prefix-caching"].release == "vllm 0.33.0"
    assert report.rewritten == "vllm serve Qwen/Qwen3-8B --disable-prefix-caching --disable-log-requests"
    assert _passes(report)


def test_a_choice_033_dropped_is_refused_and_the_option_left_out():
    report = _check("0.32.0", "0.33.0", "vllm serve Qwen/Qwen3-8B --spec-method medusa --max-model-len 8192")
    assert not report.ok
    assert "removed-choice" in _codes(report)["--spec-method"]
    assert report.rewritten == "vllm serve Qwen/Qwen3-8B --max-model-len 8192"
    assert _passes(report)
    assert VLLM.lint(shlex.split("vllm serve Qwen/Qwen3-8B --spec-method medusa"), "0.32.0").valid


def test_a_nested_config_choice_the_new_release_refuses_says_the_old_one_took_it():
    command = "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"medusa\", \"model\": \"x\"}'"
    report = _check("0.32.0", "0.33.0", command)
    errors = [s.finding for s in report.findings if s.finding.is_error]
    assert errors and all("vllm 0.32.0 accepted it" in f.message for f in errors)
    assert any(s.finding.code == "rewritten-still-invalid" for s in report.findings)


def test_defaults_that_changed_are_notes_for_what_the_command_leaves_unset():
    unset = _check("0.32.0", "0.33.0", "vllm serve Qwen/Qwen3-8B")
    notes = [s.finding for s in unset.findings if s.finding.code == "changed-default"]
    assert any(f.option == "--tool-strict-level" and f.severity == "note" and "'auto'" in f.message for f in notes)
    assert not any(f.option == "--mamba-cache-mode" for f in notes)  # 'none' and None mean the same
    given = _check("0.32.0", "0.33.0", "vllm serve Qwen/Qwen3-8B --tool-strict-level auto")
    assert not any(s.finding.option == "--tool-strict-level" and s.finding.code == "changed-default"
                   for s in given.findings)


def test_an_old_release_without_a_catalog_is_read_from_the_table_and_the_new_catalog():
    command = ("VLLM_USE_V1=0 vllm serve Qwen/Qwen3-8B --enable-reasoning --reasoning-parser deepseek_r1 "
               "--swap-space 16 --task embed --guided-decoding-backend xgrammar "
               "--structured-outputs-config '{\"disable_any_whitespace\": true}' --disable-log-requests "
               "--max_model_len 8192")
    report = _check("0.5.5", "0.32.0", command)  # older than every stored catalog (they start at 0.6)
    assert not report.ok and report.checked_old is None and report.checked_new == "0.32.0"
    codes = _codes(report)
    assert "no-old-catalog" in codes[None] and "changed-default" in codes[None]
    assert codes["--enable-reasoning"] == {"removed-option"}
    assert codes["--task"] == {"renamed-option"}
    assert codes["--guided-decoding-backend"] == {"moved-option"}
    assert codes["--disable-log-requests"] == {"renamed-option"}
    by_option = {s.finding.option: s for s in report.findings}
    assert by_option["--swap-space"].finding.release == "vllm 0.18.0"
    assert by_option["--swap-space"].source.startswith("https://github.com/")
    words = shlex.split(report.rewritten)
    config = json.loads(words[words.index("--structured-outputs-config") + 1])
    assert config == {"disable_any_whitespace": True, "backend": "xgrammar"}
    assert words[words.index("--runner") + 1] == "pooling"
    assert "--enable-reasoning" not in words and "--swap-space" not in words and "16" not in words
    assert _passes(report)


def test_a_value_moved_into_a_json_option_keeps_its_type():
    report = _check("0.6.6.post1", "0.32.0", "vllm serve m --rope-scaling '{\"factor\": 4.0, \"rope_type\": \"yarn\"}' "
                    "--speculative-model d --num-speculative-tokens 5")
    words = shlex.split(report.rewritten)
    assert json.loads(words[words.index("--hf-overrides") + 1]) == {"rope_scaling": {"factor": 4.0, "rope_type": "yarn"}}
    assert json.loads(words[words.index("--speculative-config") + 1]) == {"model": "d", "num_speculative_tokens": 5}


def test_releases_resolve_to_the_newest_stored_catalog_at_or_below():
    report = _check("0.32.0", "0.33.7", "vllm serve Qwen/Qwen3-8B")
    assert report.checked_new == "0.33.0" and report.new == "0.33.7"
    notes = [s.finding for s in report.findings if s.finding.code == "release-resolved"]
    assert any("0.33.7" in f.message and "0.33.0" in f.message for f in notes)
    oldest = VLLM.catalogs.versions()[0]
    with pytest.raises(ServekitError, match="no vllm catalog at or below"):
        _check("0.1.0", "0.2.0", "vllm serve m")
    assert VLLM.catalogs.nearest("0.0.1") is None and VLLM.catalogs.nearest(oldest) == oldest


def test_the_from_release_must_be_older():
    with pytest.raises(ServekitError, match="not older"):
        _check("0.33.0", "0.32.0", "vllm serve m")


def test_sglang_switches_that_became_choices_are_rewritten():
    report = _check("0.4.9.post6", "0.5.23", "python -m sglang.launch_server --model-path m --tp 8 --enable-ep-moe "
                    "--enable-flashinfer-mla --enable-deepep-moe", engine="sglang")
    assert not report.ok
    words = shlex.split(report.rewritten)
    assert words[words.index("--ep-size") + 1] == "8"  # the TP size the old switch used
    assert words[words.index("--attention-backend") + 1] == "flashinfer"
    assert words[words.index("--moe-a2a-backend") + 1] == "deepep"
    assert _passes(report, "sglang")
    kept = _check("0.4.9.post6", "0.5.23", "python -m sglang.launch_server --model-path m --ep-size 4 --enable-ep-moe",
                  engine="sglang")
    assert shlex.split(kept.rewritten).count("--ep-size") == 1 and "--ep-size 4" in kept.rewritten


def test_a_docker_form_is_checked_but_not_rewritten():
    report = _check("0.9.2", "0.32.0", "docker run --gpus all vllm/vllm-openai:v0.9.2 --model m --enable-reasoning "
                    "--reasoning-parser deepseek_r1")
    assert not report.ok and report.rewritten is None


def test_max_serve_commands_are_checked_against_its_stored_catalog():
    newest = get_engine("max").catalogs.versions()[-1]
    report = _check("25.1.0", newest, "max serve --model-path google/gemma-3-12b-it", engine="max")
    assert report.ok and report.rewritten == "max serve --model-path google/gemma-3-12b-it"


def _cli(capsys, *args: str) -> tuple[int, str]:
    code = main(["lint", *args])
    return code, capsys.readouterr().out


def test_cli_json_shape_and_exit_status(capsys):
    code, out = _cli(capsys, "--from", "0.9.2", "--to", "0.32.0", "--format", "json", "--",
                     "vllm", "serve", "Qwen/Qwen3-8B", "--enable-reasoning", "--reasoning-parser", "deepseek_r1")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and (data["from"], data["to"]) == ("0.9.2", "0.32.0")
    assert all({"code", "severity", "message", "fix", "release"} <= set(f) for f in data["findings"])
    assert data["rewritten"] == "vllm serve Qwen/Qwen3-8B --reasoning-parser deepseek_r1"
    code, out = _cli(capsys, "--version", "0.32.0", "--", *shlex.split(data["rewritten"]))
    assert code == 0, out
    code, out = _cli(capsys, "--from", "0.32.0", "--to", "0.33.0", "--", "vllm", "serve", "m", "--max-model-len", "8192")
    assert code == 0 and "vllm 0.32.0 -> 0.33.0: starts as written" in out


def test_cli_refuses_half_an_upgrade(capsys):
    assert main(["lint", "--to", "0.33.0", "--", "vllm", "serve", "m"]) == 2
    assert main(["lint", "--hardware", "h100", "--", "vllm", "serve", "m"]) == 2


def test_the_kv_pool_is_compared_when_the_model_and_hardware_are_known(capsys):
    args = ("--from", "0.9.2", "--to", "0.33.0", "--format", "json", "--", "vllm", "serve", "Qwen/Qwen3.8-27B",
            "--tensor-parallel-size", "2", "--max-model-len", "32768")
    _, out = _cli(capsys, *args)
    assert any(f["code"] == "memory-not-compared" for f in json.loads(out)["findings"])
    _, out = _cli(capsys, "--hardware", "h100", *args)
    pool = [f for f in json.loads(out)["findings"] if f["code"] == "kv-pool-change"]
    assert len(pool) == 1 and "0.9.2" in pool[0]["message"] and pool[0]["release"] == "vllm 0.33.0"
    assert "release_rules" in pool[0]["source"]


def test_cli_reads_the_engine_command_out_of_a_shell_line(capsys):
    line = "export CUDA_VISIBLE_DEVICES=0,1; nohup vllm serve m --swap-space 4 \\\n  --tensor-parallel-size 2 > log 2>&1 &"
    code, out = _cli(capsys, "--from", "0.9.2", "--to", "0.32.0", "--format", "json", "--", line)
    data = json.loads(out)
    assert code == 1 and data["rewritten"] == "CUDA_VISIBLE_DEVICES=0,1 vllm serve m --tensor-parallel-size 2"
    assert main(["lint", "--from", "0.9.2", "--to", "0.32.0", "--", "cd x && echo hi"]) == 1
