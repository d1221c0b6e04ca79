"""Launch values no engine would start with are one clear error, not a crash deep in the plan."""

from __future__ import annotations

import pytest

from servekit.cli.app import main
from servekit.errors import ServekitError
from servekit.fit.launch import LaunchArgsError, launch_settings


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--tensor-parallel-size", "0"], "--tensor-parallel-size"),
        (["-pp", "0"], "--pipeline-parallel-size"),
        (["--max-model-len", "-5"], "--max-model-len"),
        (["--max-num-seqs", "0"], "--max-num-seqs"),
        (["--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization"),
        (["--gpu-memory-utilization", "0"], "--gpu-memory-utilization"),
    ],
)
def test_out_of_range_launch_values_are_refused(argv, flag):
    with pytest.raises(LaunchArgsError, match=flag):
        launch_settings(["vllm", "serve", "m", *argv])


def test_in_range_values_are_kept():
    launch = launch_settings(["-tp", "2", "--gpu-memory-utilization", "1", "--max-model-len", "8k"])
    assert (launch.tp, launch.gpu_memory_utilization, launch.max_model_len) == (2, 1.0, 8000)


@pytest.mark.parametrize("option", [["--tp", "0"], ["--pp", "0"], ["--gpu-memory-utilization", "2"]])
def test_fit_cli_reports_one_line_and_exit_1(capsys, option):
    code = main(["fit", "Qwen/Qwen3.8-27B", "--hardware", "h200", *option])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: ") and "must be" in err and "Traceback" not in err


@pytest.mark.parametrize("text", ["auto", "-1"])
def test_max_model_len_left_to_vllm_is_not_a_number(text):
    assert launch_settings(["--max-model-len", text]).max_model_len is None


@pytest.mark.parametrize(("text", "count"), [("32_768", 32768), ("1m", 1_000_000), ("2G", 2 * 2**30)])
def test_max_model_len_reads_vllm_human_readable_ints(text, count):
    assert launch_settings(["--max-model-len", text]).max_model_len == count


def test_unreadable_max_model_len_names_the_flag():
    with pytest.raises(ServekitError, match="--max-model-len 'abc' is not a length"):
        launch_settings(["--max-model-len", "abc"])
