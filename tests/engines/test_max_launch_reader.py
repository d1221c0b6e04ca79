"""Reading vLLM launches (the input of every dialect): forms, aliases, values, switches."""

from __future__ import annotations

import pytest

from servekit.engines.vllm.launch import parse_token_count, parse_vllm_argv
from servekit.errors import ServekitError


def test_vllm_serve_form():
    launch = parse_vllm_argv(
        [
            "vllm",
            "serve",
            "org/m",
            "-tp",
            "2",
            "--max_model_len=4096",
            "--enforce-eager",
            "--served-model-name",
            "a",
            "b",
            "--port",
            "8000",
        ]
    )
    assert launch.program == ("vllm", "serve") and launch.model == "org/m"
    assert launch.get_int("--tensor-parallel-size") == 2
    assert launch.get_length("--max-model-len") == 4096
    assert launch.switch("--enforce-eager") is True
    served = next(o for o in launch.options if o.flag == "--served-model-name")
    assert served.values == ("a", "b")
    assert launch.get("--port") == "8000"


def test_api_server_form_and_model_option():
    launch = parse_vllm_argv(["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "org/m", "-O3"])
    assert launch.model == "org/m"
    assert launch.get("--optimization-level") == "3"  # vLLM rewrites -O3 to --optimization-level 3
    assert not launch.has("--model")


def test_switches_and_negations():
    launch = parse_vllm_argv(["vllm", "serve", "m", "--enable-prefix-caching", "--no-enable-prefix-caching"])
    assert launch.switch("--enable-prefix-caching") is False
    assert launch.switch("--enable-chunked-prefill") is None


def test_json_values_and_errors():
    launch = parse_vllm_argv(
        ["vllm", "serve", "m", "--speculative-config", '{"method":"mtp"}', "--additional-config", "{bad"]
    )
    assert launch.get_json("--speculative-config") == {"method": "mtp"}
    with pytest.raises(ServekitError, match="--additional-config is not valid JSON"):
        launch.get_json("--additional-config")
    with pytest.raises(ServekitError, match="unexpected word"):
        parse_vllm_argv(["vllm", "serve", "m", "--enforce-eager", "stray"])


@pytest.mark.parametrize(("text", "count"), [("32768", 32768), ("32k", 32000), ("32K", 32768), ("1M", 1048576)])
def test_human_readable_lengths(text, count):
    assert parse_token_count(text) == count


def test_the_flag_catalog_drives_aliases_abbreviations_and_switches():
    """Aliases, negations, prefixes and value-taking all come from vLLM's extracted catalog."""
    launch = parse_vllm_argv(
        ["vllm", "serve", "m", "-dcp", "2", "-ep", "--kv-cache-memory", "1G", "--no-enable-prefix-caching",
         "--device-memory-utilization", "0.8", "--trust-remote-code", "-q", "fp8"]
    )
    assert launch.get_int("--decode-context-parallel-size") == 2
    assert launch.switch("--enable-expert-parallel") is True
    assert launch.get("--kv-cache-memory-bytes") == "1G"
    assert launch.switch("--enable-prefix-caching") is False
    assert launch.get("--gpu-memory-utilization") == "0.8"
    assert launch.switch("--trust-remote-code") is True and launch.get("--quantization") == "fp8"


def test_lenient_reading_keeps_stray_words():
    launch = parse_vllm_argv(["vllm", "serve", "m", "--enforce-eager", "stray"], strict=False)
    assert launch.model == "m" and launch.extras == ("stray",) and launch.switch("--enforce-eager")
