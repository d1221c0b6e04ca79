"""vLLM launch -> MAX serve / warm-cache argv, checked against MAX 26.7's own help text."""

from __future__ import annotations

import re
import shlex

import pytest
from testing.shared import REFERENCE

from servekit.engines.common.translation import DialectContext
from servekit.engines.max import ENGINE as DIALECT
from servekit.engines.max.rules import validate_max_argv
from servekit.engines.max.translate import translate_to_max
from servekit.errors import ServekitError

MAX_HELP = REFERENCE / "engines" / "max-26.7"
H200 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 1128}

FULL = [
    "vllm",
    "serve",
    "Qwen/Qwen3-8B",
    "--tensor-parallel-size",
    "2",
    "--max-model-len",
    "32768",
    "--max-num-seqs",
    "64",
    "--gpu-memory-utilization",
    "0.85",
    "--enable-prefix-caching",
    "--no-enable-chunked-prefill",
    "--max-num-batched-tokens",
    "8192",
    "--trust-remote-code",
    "--served-model-name",
    "qwen",
    "--reasoning-parser",
    "qwen3",
    "--tool-call-parser",
    "qwen3_coder",
    "--enable-auto-tool-choice",
    "--kv-cache-dtype",
    "fp8",
    "--quantization",
    "fp8",
    "--speculative-config",
    '{"method":"eagle3","model":"org/drafter","num_speculative_tokens":3}',
    "--enforce-eager",
    "--hf-overrides",
    '{"rope_theta": 1}',
    "--host",
    "0.0.0.0",
    "--port",
    "8001",
]


def help_options(name: str) -> set[str]:
    """Every option string in a MAX help text (both halves of --x / --no-x pairs)."""
    path = MAX_HELP / f"{name}.txt"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    found: set[str] = set()
    for line in path.read_text().splitlines():
        match = re.match(r"^  (--[a-z0-9-]+(?:, --[a-z0-9-]+)*)(?: / (--[a-z0-9-]+))?", line)
        if match:
            found.update(o.strip() for o in match.group(1).split(","))
            if match.group(2):
                found.add(match.group(2))
    return found


def options_of(argv) -> list[str]:
    return [w for w in argv if w.startswith("--")]


def test_full_launch_maps_option_by_option():
    result = translate_to_max(FULL, DialectContext(hardware=H200, hardware_id="h200"))
    assert result.argv == (
        "max",
        "serve",
        "--model-path",
        "Qwen/Qwen3-8B",
        "--devices",
        "gpu:0,1",
        "--max-length",
        "32768",
        "--max-batch-size",
        "64",
        "--device-memory-utilization",
        "0.85",
        "--enable-prefix-caching",
        "--no-enable-chunked-prefill",
        "--max-batch-input-tokens",
        "8192",
        "--trust-remote-code",
        "--served-model-name",
        "qwen",
        "--reasoning-parser",
        "qwen3_5",
        "--tool-parser",
        "qwen3_5",
        "--kv-cache-format",
        "float8_e4m3fn",
        "--quantization-encoding",
        "float8_e4m3fn",
        "--speculative-method",
        "eagle",
        "--draft-model-path",
        "org/drafter",
        "--num-speculative-tokens",
        "3",
        "--no-device-graph-capture",
        "--host",
        "0.0.0.0",
        "--port",
        "8001",
    )
    assert {u.flag for u in result.untranslated} == {"--enable-auto-tool-choice", "--hf-overrides"}
    assert all(u.reason for u in result.untranslated)
    assert not [f for f in result.findings if f.severity == "error"]


def test_parser_names_map_to_max_or_are_dropped_with_a_reason():
    result = translate_to_max(["vllm", "serve", "m", "--tool-call-parser", "hermes", "--reasoning-parser", "glm45"])
    assert result.argv[-2:] == ("--reasoning-parser", "glm45")
    assert "--tool-parser" not in result.argv
    (dropped,) = result.untranslated
    assert (dropped.flag, dropped.value) == ("--tool-call-parser", "hermes")
    assert "default parser" in dropped.reason
    renamed = translate_to_max(["vllm", "serve", "m", "--tool-call-parser", "deepseek_v31"])
    assert renamed.argv[-2:] == ("--tool-parser", "deepseekv3_1")
    assert "max.parser-name" in {f.code for f in renamed.findings}


def test_warm_cache_drops_http_options_and_adds_target():
    result = translate_to_max(FULL, DialectContext(hardware=H200, options={"target": "cuda:sm_90"}))
    assert result.warm_cache_argv[:2] == ("max", "warm-cache")
    assert "--port" not in result.warm_cache_argv and "--host" not in result.warm_cache_argv
    assert result.warm_cache_argv[-2:] == ("--target", "cuda:sm_90")
    serve_pipeline = [w for w in result.argv[2:] if w not in ("--host", "0.0.0.0", "--port", "8001")]
    assert list(result.warm_cache_argv[2:-2]) == serve_pipeline


def test_target_auto_follows_the_hardware():
    result = translate_to_max(
        ["vllm", "serve", "m"], DialectContext(hardware=H200, hardware_id="h200", options={"target": "auto"})
    )
    assert result.warm_cache_argv[-2:] == ("--target", "cuda:sm_90")
    mi = translate_to_max(["vllm", "serve", "m"], DialectContext(hardware_id="mi300x", options={"target": "auto"}))
    assert mi.warm_cache_argv[-2:] == ("--target", "hip:gfx942")


def test_bad_target_is_an_error():
    result = translate_to_max(["vllm", "serve", "m"], DialectContext(options={"target": "sm_90"}))
    assert "--target" not in result.warm_cache_argv
    assert [f.code for f in result.findings if f.severity == "error"] == ["max.target-format"]


def test_every_emitted_option_exists_in_max_help():
    serve, warm = help_options("serve"), help_options("warm-cache")
    result = translate_to_max(
        FULL
        + [
            "--enable-lora",
            "--lora-modules",
            "a=/l/a",
            "--max-loras",
            "2",
            "--max-lora-rank",
            "32",
            "--data-parallel-size",
            "2",
            "--enable-expert-parallel",
            "--revision",
            "main",
        ],
        DialectContext(hardware=H200, options={"target": "cuda:sm_90"}),
    )
    assert set(options_of(result.argv)) <= serve
    assert set(options_of(result.warm_cache_argv)) <= warm


def test_data_parallel_expands_the_device_list():
    result = translate_to_max(
        ["vllm", "serve", "m", "-tp", "2", "-dp", "4", "--enable-expert-parallel"], DialectContext(hardware=H200)
    )
    argv = result.argv
    assert argv[argv.index("--devices") + 1] == "gpu:0,1,2,3,4,5,6,7"
    assert argv[argv.index("--data-parallel-degree") + 1] == "4"
    assert argv[argv.index("--ep-size") + 1] == "8"


def test_more_devices_than_the_node_has_is_an_error():
    result = translate_to_max(["vllm", "serve", "m", "-tp", "16"], DialectContext(hardware=H200))
    assert "max.too-many-devices" in {f.code for f in result.findings}


def test_explicit_devices_and_cpu():
    ids = translate_to_max(["vllm", "serve", "m", "-tp", "2"], DialectContext(options={"devices": [4, 5]}))
    assert ids.argv[ids.argv.index("--devices") + 1] == "gpu:4,5"
    cpu = translate_to_max(["vllm", "serve", "m"], DialectContext(hardware={"generation": "cpu"}))
    assert cpu.argv[cpu.argv.index("--devices") + 1] == "cpu"


def test_pipeline_parallel_cannot_be_expressed():
    result = translate_to_max(["vllm", "serve", "m", "--pipeline-parallel-size", "2"])
    assert [u.flag for u in result.untranslated] == ["--pipeline-parallel-size"]
    assert "max.pipeline-parallel" in {f.code for f in result.findings if f.severity == "error"}


@pytest.mark.parametrize(
    ("quant", "encoding"),
    [("fp8", "float8_e4m3fn"), ("modelopt_fp4", "float4_e2m1fnx2"), ("gptq", "gptq")],
)
def test_quantization_encodings(quant, encoding):
    result = translate_to_max(["vllm", "serve", "m", "--quantization", quant])
    assert result.argv[result.argv.index("--quantization-encoding") + 1] == encoding


def test_unsupported_quantization_is_an_error_and_listed():
    result = translate_to_max(["vllm", "serve", "m", "--quantization", "awq"])
    assert "--quantization-encoding" not in result.argv
    assert result.untranslated[0].flag == "--quantization" and result.untranslated[0].value == "awq"
    assert "max.quantization" in {f.code for f in result.findings}


def test_precision_fills_in_the_encoding_when_the_argv_has_none():
    result = translate_to_max(["vllm", "serve", "m"], DialectContext(options={"precision": "bf16"}))
    assert result.argv[-2:] == ("--quantization-encoding", "bfloat16")
    dtype = translate_to_max(["vllm", "serve", "m", "--dtype", "half"])
    assert dtype.argv[-2:] == ("--quantization-encoding", "float16")


def test_mtp_family_methods_become_mtp_and_ngram_is_reported():
    mtp = translate_to_max(
        [
            "vllm",
            "serve",
            "m",
            "--speculative-config",
            '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}',
        ]
    )
    argv = mtp.argv
    assert argv[argv.index("--speculative-method") + 1] == "mtp"
    assert "--draft-model-path" not in argv
    assert [u.flag for u in mtp.untranslated] == ["--speculative-config.enforce_eager"]
    ngram = translate_to_max(["vllm", "serve", "m", "--speculative-config", '{"method":"ngram"}'])
    assert "--speculative-method" not in ngram.argv
    assert ngram.untranslated[0].flag == "--speculative-config"
    assert "max.speculative-method" in {f.code for f in ngram.findings}


def test_lora_modules_become_lora_paths():
    result = translate_to_max(
        [
            "vllm",
            "serve",
            "m",
            "--enable-lora",
            "--lora-modules",
            "a=/l/a",
            '{"name":"b","path":"/l/b"}',
            "--max-loras",
            "2",
        ]
    )
    argv = result.argv
    assert [argv[i + 1] for i, w in enumerate(argv) if w == "--lora-paths"] == ["a=/l/a", "b=/l/b"]
    assert argv[argv.index("--max-num-loras") + 1] == "2"


def test_lora_without_enable_is_flagged():
    result = translate_to_max(["vllm", "serve", "m", "--lora-modules", "a=/l/a"])
    assert {"max.lora-disabled"} <= {f.code for f in result.findings}


def test_extra_served_names_and_vllm_env_are_listed():
    result = translate_to_max(
        ["vllm", "serve", "m", "--served-model-name", "a", "b"],
        DialectContext(env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "HF_TOKEN": "x"}),
    )
    assert result.argv[-2:] == ("--served-model-name", "a")
    assert {(u.flag, u.value) for u in result.untranslated} == {
        ("--served-model-name", "b"),
        ("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1"),
    }


def test_nothing_is_dropped_silently():
    result = translate_to_max(FULL + ["--seed", "0", "--some-future-flag", "x"])
    listed = {u.flag for u in result.untranslated}
    assert {"--seed", "--some-future-flag"} <= listed
    reasons = {u.flag: u.reason for u in result.untranslated}
    assert "no equivalent" in reasons["--some-future-flag"]


def test_human_readable_context_length():
    result = translate_to_max(["vllm", "serve", "m", "--max-model-len", "32k"])
    assert result.argv[result.argv.index("--max-length") + 1] == "32000"
    with pytest.raises(ServekitError):
        translate_to_max(["vllm", "serve", "m", "--max-model-len", "lots"])


def test_validate_uses_the_stored_catalog_and_max_rules():
    findings = validate_max_argv(
        [
            "max",
            "serve",
            "--model-path",
            "m",
            "--bogus",
            "--devices",
            "gpus",
            "--speculative-method",
            "eagle",
            "--max-num-loras",
            "2",
            "--target",
            "cuda",
        ]
    )
    codes = {f.code for f in findings}
    assert {"unknown-option", "max.devices-format", "max.draft-model", "max.lora-disabled", "max.target-serve"} <= codes
    clean = validate_max_argv(translate_to_max(FULL, DialectContext(hardware=H200)).argv)
    assert not [f for f in clean if f.severity == "error"]


def test_engine_lint_applies_catalog_and_max_rules():
    from servekit.engines.registry import get_engine

    engine = get_engine("max")
    assert engine is DIALECT
    result = engine.lint(
        [
            "max",
            "warm-cache",
            "--model-path",
            "m",
            "--devices",
            "gpu:0,1,2",
            "--data-parallel-degree",
            "2",
            "--target",
            "cuda:sm_90",
        ]
    )
    assert {f.code for f in result.findings if f.severity == "error"} == {"max.dp-devices"}
    ok = engine.lint(list(translate_to_max(FULL, DialectContext(hardware=H200)).argv))
    assert ok.valid, ok.findings


def test_dialect_returns_an_engine_command_with_warm_cache_step():
    cmd = DIALECT.translate(FULL, DialectContext(hardware=H200, env={"VLLM_X": "1", "HF_HOME": "/h"}))
    assert cmd.engine == "max"
    assert cmd.env == {"HF_HOME": "/h"}
    assert cmd.precompile[0].argv[:2] == ("max", "warm-cache")
    assert shlex.split(cmd.command()) == list(cmd.argv)
    data = cmd.to_dict()
    assert data["untranslated"] and data["precompile"][0]["name"] == "warm-cache"


def test_auto_context_length_and_single_word_options():
    result = translate_to_max(["vllm", "serve", "m", "--max-model-len auto"])
    assert "--max-length" not in result.argv
    assert [(u.flag, u.value) for u in result.untranslated] == [("--max-model-len", "auto")]


def test_architecture_must_exist_in_max():
    missing = translate_to_max(["vllm", "serve", "m"], DialectContext(options={"architecture": "FancyForCausalLM"}))
    assert "max.architecture" in {f.code for f in missing.findings if f.severity == "error"}
    known = translate_to_max(["vllm", "serve", "m"], DialectContext(options={"architecture": "LlamaForCausalLM"}))
    assert "max.architecture" not in {f.code for f in known.findings}


def test_dflash2_drafter_selects_the_dflash2_method():
    spec = ["--speculative-config", '{"method":"dflash","model":"org/d","num_speculative_tokens":7}']
    plain = translate_to_max(["vllm", "serve", "m", *spec])
    assert plain.argv[plain.argv.index("--speculative-method") + 1] == "dflash"
    two = translate_to_max(
        ["vllm", "serve", "m", *spec], DialectContext(options={"draft_architecture": "DFlash2DraftModel"})
    )
    assert two.argv[two.argv.index("--speculative-method") + 1] == "dflash2"


def test_image_follows_the_gpu_brand():
    nvidia = DIALECT.translate(["vllm", "serve", "m"], DialectContext(hardware=H200, image="vllm/vllm-openai:v0.32.0"))
    assert nvidia.image == "docker.modular.com/modular/max-nvidia-full:26.7.0"
    assert "max.image" in {f.code for f in nvidia.findings}
    amd = DIALECT.translate(["vllm", "serve", "m"], DialectContext(hardware={"brand": "AMD", "generation": "amd"}))
    assert amd.image == "docker.modular.com/modular/max-amd:26.7.0"
    cpu = DIALECT.translate(["vllm", "serve", "m"], DialectContext(hardware={"brand": "Intel", "generation": "cpu"}))
    assert cpu.image is None


@pytest.mark.parametrize(
    ("hardware_id", "generation", "target"),
    [
        ("rtx_pro_6000_8x", "blackwell", "cuda:sm_120"),
        ("rtx_4090_2x", "ada", "cuda:sm_89"),
        ("dgx_station_gb300", "blackwell", "cuda:sm_103"),
    ],
)
def test_target_auto_ignores_card_count_suffixes(hardware_id, generation, target):
    context = DialectContext(
        hardware={"brand": "NVIDIA", "generation": generation}, hardware_id=hardware_id, options={"target": "auto"}
    )
    assert translate_to_max(["vllm", "serve", "m"], context).warm_cache_argv[-2:] == ("--target", target)


def test_hardware_without_a_max_backend_is_an_error():
    tpu = DialectContext(
        hardware={"brand": "Google", "generation": "tpu"}, hardware_id="trillium", options={"target": "auto"}
    )
    result = translate_to_max(["vllm", "serve", "m"], tpu)
    assert "max.hardware" in {f.code for f in result.findings if f.severity == "error"}
    cpu = DialectContext(hardware={"brand": "Intel", "generation": "cpu"}, options={"target": "auto"})
    assert "--target" not in translate_to_max(["vllm", "serve", "m"], cpu).warm_cache_argv
