"""Every rule of seed 000 on QAIC launches: each violation names the field and the fix."""

from __future__ import annotations

import json
import shlex

import pytest

from servekit.catalog.documents import bundled_catalog_dir, read_yaml
from servekit.engines.common.translation import DialectContext
from servekit.engines.qaic import ENGINE as DIALECT
from servekit.engines.qaic.translate import translate_qaic, validate_qaic
from servekit.engines.vllm.launch import parse_vllm_argv

BASE = [
    "vllm",
    "serve",
    "meta-llama/Llama-3.1-8B-Instruct",
    "--max-model-len",
    "2048",
    "--max-num-seqs",
    "4",
    "--quantization",
    "mxfp6",
    "--kv-cache-dtype",
    "mxint8",
]
SPEC = [
    "--speculative-config",
    '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}',
]


@pytest.fixture(scope="module")
def ultra() -> dict:
    return read_yaml(bundled_catalog_dir() / "taxonomy.yaml")["hardware_profiles"]["ai100_ultra"]


def with_config(config: dict, *extra: str) -> list[str]:
    return [*BASE, *extra, "--additional-config", json.dumps(config)]


def codes(argv, **options) -> dict[str, list]:
    hardware = options.pop("hardware", None)
    found: dict[str, list] = {}
    for f in validate_qaic(argv, DialectContext(hardware=hardware, options=options)):
        found.setdefault(f.code, []).append(f)
    return found


def errors(argv, **options) -> set[str]:
    return {code for code, fs in codes(argv, **options).items() if any(f.severity == "error" for f in fs)}


def test_a_clean_launch_has_no_errors(ultra):
    config = {"override_qaic_config": {"device_group": [0, 1], "num_cores": 16}}
    assert errors(with_config(config, "--tensor-parallel-size", "2"), hardware=ultra) == set()


def test_aliases_that_disagree_are_an_error_naming_both():
    found = codes(with_config({"override_qaic_config": {"num_cores": 10, "aic_num_cores": 16}}))
    conflict = found["qaic.alias-conflict"][0]
    assert conflict.severity == "error"
    assert "num_cores=10" in conflict.message and "aic_num_cores=16" in conflict.message
    assert conflict.fix == "keep only num_cores"
    same = codes(with_config({"override_qaic_config": {"dfs": True, "aic_enable_depth_first": True}}))
    assert same["qaic.alias-duplicate"][0].severity == "warning"


def test_num_devices_against_device_group():
    mismatch = codes(with_config({"override_qaic_config": {"num_devices": 2, "device_group": [0, 1, 2, 3]}}))
    assert mismatch["qaic.devices-conflict"][0].severity == "error"
    assert "either num_devices or device_group" in mismatch["qaic.devices-conflict"][0].fix
    both = codes(with_config({"override_qaic_config": {"num_devices": 4, "device_group": [0, 1, 2, 3]}}))
    assert both["qaic.devices-both"][0].severity == "warning"


def test_speculative_decoding_and_multimodal_are_exclusive():
    config = {
        "override_qaic_config": {"device_group": [0]},
        "draft_override_qaic_config": {"device_group": [0]},
        "height": [364],
        "width": [532],
    }
    assert "qaic.spd-multimodal" in errors(with_config(config, *SPEC))
    # the speculative config alone with a multimodal model is the same conflict
    assert "qaic.spd-multimodal" in errors([*BASE, *SPEC], multimodal=True)


def test_pooling_fields():
    bad_device = errors(with_config({"override_qaic_config": {"pooling_device": "gpu"}}))
    assert "qaic.pooling-device" in bad_device
    cpu_only = errors(with_config({"override_qaic_config": {"pooling_device": "cpu", "normalize": True}}))
    assert "qaic.pooling-qaic-only" in cpu_only
    fine = codes(
        with_config(
            {
                "override_qaic_config": {
                    "pooling_device": "qaic",
                    "pooling_method": "cls",
                    "normalize": True,
                    "softmax": False,
                }
            }
        )
    )
    assert not any(f.severity == "error" for fs in fine.values() for f in fs)
    custom = codes(with_config({"override_qaic_config": {"pooling_device": "qaic", "pooling_method": "last"}}))
    assert custom["qaic.pooling-custom"][0].severity == "note"


@pytest.mark.parametrize("value", [True, False, None])
def test_prefill_only_accepts_true_false_null(value):
    assert "qaic.prefill-only" not in errors(with_config({"override_qaic_config": {"prefill_only": value}}))


@pytest.mark.parametrize("value", ["true", 1, "prefill"])
def test_prefill_only_rejects_anything_else(value):
    found = codes(with_config({"override_qaic_config": {"prefill_only": value}}))
    assert found["qaic.prefill-only"][0].severity == "error"
    assert "JSON true, false or null" in found["qaic.prefill-only"][0].fix


def test_ccl_lists():
    too_long = errors(with_config({"override_qaic_config": {"comp_ctx_lengths_decode": [1024, 4096]}}))
    assert "qaic.ccl-length" in too_long
    not_list = errors(with_config({"override_qaic_config": {"comp_ctx_lengths_prefill": "1024"}}))
    assert "qaic.length-list" in not_list
    empty = errors(with_config({"override_qaic_config": {"comp_ctx_lengths_prefill": []}}))
    assert "qaic.length-list" in empty
    both = codes(with_config({"override_qaic_config": {"ccl_enabled": True, "comp_ctx_lengths_prefill": [1024]}}))
    assert both["qaic.ccl-explicit"][0].severity == "note"
    bad_flag = errors(with_config({"override_qaic_config": {"ccl_enabled": "yes"}}))
    assert "qaic.bool-field" in bad_flag


def test_embed_seq_len_must_include_max_model_len():
    assert "qaic.embed-seq-len" in errors(with_config({"override_qaic_config": {"embed_seq_len": [512, 1024]}}))
    assert "qaic.embed-seq-len" not in errors(with_config({"override_qaic_config": {"embed_seq_len": [512, 2048]}}))


def test_aot_mode_memory_utilization_has_no_effect():
    found = codes([*BASE, "--gpu-memory-utilization", "0.8"], mode="aot")
    assert found["qaic.aot-memory"][0].severity == "warning"
    assert found["qaic.aot-memory"][0].option == "--gpu-memory-utilization"


def test_pyt_mode_needs_eager_and_no_async_scheduling():
    found = errors([*BASE, "--async-scheduling"], mode="pyt")
    assert {"qaic.pyt-eager", "qaic.pyt-async"} <= found
    assert errors([*BASE, "--enforce-eager", "--no-async-scheduling"], mode="pyt") == set()
    assert "qaic.mode" in errors(BASE, mode="jit")


def test_tp_size_is_the_number_of_qids():
    config = {"override_qaic_config": {"device_group": [0, 1, 2, 3]}}
    found = codes(with_config(config, "--tensor-parallel-size", "2"))
    assert found["qaic.tp-qids"][0].severity == "error"
    assert "--tensor-parallel-size 4" in found["qaic.tp-qids"][0].fix


def test_hardware_limits(ultra):
    outside = codes(with_config({"override_qaic_config": {"device_group": [6, 7, 8]}}), hardware=ultra)
    assert "[8]" in outside["qaic.device-range"][0].message
    cores = errors(with_config({"override_qaic_config": {"device_group": [0], "num_cores": 20}}), hardware=ultra)
    assert "qaic.num-cores" in cores
    gpu = errors(BASE, hardware={"brand": "NVIDIA", "generation": "hopper"})
    assert "qaic.hardware" in gpu


def test_fields_vllm_sets_itself_are_flagged_and_compiler_fields_noted():
    found = codes(with_config({"override_qaic_config": {"ctx_len": 4096, "aic_hw_version": "2.0"}}))
    assert "--max-model-len" in found["qaic.ignored-field"][0].fix
    assert found["qaic.compiler-field"][0].severity == "note"


def test_prefer_vllm_arguments_to_mx_fields():
    found = codes(with_config({"override_qaic_config": {"mxfp6_matmul": True, "mxint8_kv_cache": True}}))
    assert "--quantization mxfp6" in found["qaic.prefer-quantization"][0].fix
    assert "--kv-cache-dtype mxint8" in found["qaic.prefer-kv-dtype"][0].fix


def test_vlm_dimensions_come_in_pairs():
    assert "qaic.vlm-pair" in errors(with_config({"override_qaic_config": {}, "height": [364]}))
    assert "qaic.vlm-pair" in errors(with_config({"override_qaic_config": {}, "height": [364], "width": [1, 2]}))


def test_unknown_top_level_key_and_bad_json():
    assert codes(with_config({"enable_cpu_binding": True}))["qaic.unknown-key"][0].severity == "warning"
    assert "qaic.config-type" in errors([*BASE, "--additional-config", "[1]"])


def test_draft_defaults_to_eight_cores_on_the_shared_group(ultra):
    cmd = translate_qaic([*BASE, *SPEC], DialectContext(hardware=ultra))
    config = parse_vllm_argv(cmd.argv).get_json("--additional-config")
    assert config["draft_override_qaic_config"] == {"device_group": [0], "num_cores": 8}
    assert config["override_qaic_config"] == {"device_group": [0], "num_cores": 8}
    assert cmd.valid, cmd.findings
    apart = translate_qaic([*BASE, *SPEC], DialectContext(hardware=ultra, options={"draft_devices": [1]}))
    config = parse_vllm_argv(apart.argv).get_json("--additional-config")
    assert config["draft_override_qaic_config"] == {"device_group": [1], "num_cores": 16}
    assert config["override_qaic_config"]["num_cores"] == 16


def test_oversubscribed_shared_cores_warn(ultra):
    cmd = translate_qaic([*BASE, *SPEC], DialectContext(hardware=ultra, options={"num_cores": 16}))
    assert "qaic.shared-cores" in {f.code for f in cmd.findings}


def test_tensor_parallel_size_becomes_the_device_group(ultra):
    cmd = translate_qaic([*BASE, "-tp", "4"], DialectContext(hardware=ultra))
    config = parse_vllm_argv(cmd.argv).get_json("--additional-config")
    assert config["override_qaic_config"]["device_group"] == [0, 1, 2, 3]
    assert cmd.argv[cmd.argv.index("--tensor-parallel-size") + 1] == "4"
    mismatch = translate_qaic([*BASE, "-tp", "2"], DialectContext(hardware=ultra, options={"devices": [0, 1, 2]}))
    assert "qaic.tp-qids" in {f.code for f in mismatch.findings}


def test_gpu_options_are_replaced_and_reported(ultra):
    source = [
        "vllm",
        "serve",
        "m",
        "--max-model-len",
        "2048",
        "--quantization",
        "fp8",
        "--kv-cache-dtype",
        "fp8",
        "--gpu-memory-utilization",
        "0.9",
        "--additional-config",
        '{"enable_cpu_binding":true}',
    ]
    cmd = translate_qaic(source, DialectContext(hardware=ultra, env={"CUDA_VISIBLE_DEVICES": "0", "HF_TOKEN": "t"}))
    flags = {u.flag for u in cmd.untranslated}
    assert {
        "--quantization",
        "--kv-cache-dtype",
        "--gpu-memory-utilization",
        "--additional-config.enable_cpu_binding",
        "CUDA_VISIBLE_DEVICES",
    } <= flags
    assert cmd.argv.count("--quantization") == 1 and "mxfp6" in cmd.argv
    assert cmd.env == {"HF_TOKEN": "t"}


def test_existing_override_fields_are_kept(ultra):
    source = with_config({"override_qaic_config": {"aic_num_cores": 14, "mos": 2, "device_group": [2]}})
    cmd = translate_qaic(source, DialectContext(hardware=ultra))
    config = parse_vllm_argv(cmd.argv).get_json("--additional-config")
    assert config == {"override_qaic_config": {"device_group": [2], "num_cores": 14, "mos": 2}}


def test_pyt_translation_sets_its_required_flags(ultra):
    cmd = translate_qaic([*BASE, "--async-scheduling"], DialectContext(hardware=ultra, options={"mode": "pyt"}))
    assert "--enforce-eager" in cmd.argv and "--no-async-scheduling" in cmd.argv
    assert "--async-scheduling" not in cmd.argv
    assert cmd.precompile == ()
    assert cmd.valid, cmd.findings


def test_compile_step_resolves_aliases_to_qefficient_names(ultra):
    source = with_config(
        {
            "override_qaic_config": {
                "aic_num_cores": 12,
                "dfs": False,
                "mos": 1,
                "device_group": [0, 1],
                "pooling_device": "qaic",
            }
        },
        "--long-prefill-token-threshold",
        "128",
        "-tp",
        "2",
        *SPEC,
    )
    cmd = DIALECT.translate(source, DialectContext(hardware=ultra))
    target, draft = cmd.precompile
    assert target.kwargs == {
        "prefill_seq_len": 128,
        "ctx_len": 2048,
        "full_batch_size": 4,
        "mxfp6_matmul": True,
        "mxint8_kv_cache": True,
        "num_devices": 2,
        "num_cores": 12,
        "aic_enable_depth_first": False,
        "mos": 1,
    }
    assert draft.argv[4] == "meta-llama/Llama-3.2-1B-Instruct"
    assert draft.kwargs["num_cores"] == 8
    assert shlex.split(target.command()) == list(target.argv)
    compile(target.script, "<qaic-compile>", "exec")
    assert json.loads(target.argv[-1]) == target.kwargs


def test_registered_engine_lints_with_qaic_formats_and_rules():
    from servekit.engines.registry import get_engine

    engine = get_engine("vllm-qaic")
    assert engine is DIALECT
    clean = engine.lint(with_config({"override_qaic_config": {"device_group": [0], "num_cores": 16}}))
    assert clean.valid, clean.findings
    bad = engine.lint(with_config({"override_qaic_config": {"num_cores": 16, "aic_num_cores": 8}}))
    assert {f.code for f in bad.findings if f.severity == "error"} == {"qaic.alias-conflict"}
    upstream = get_engine("vllm").lint([*BASE])
    assert not upstream.valid  # mxfp6 / mxint8 exist only with the QAIC plugin


def test_gpu_image_is_replaced_with_the_cloud_ai_image(ultra):
    cmd = translate_qaic(
        BASE, DialectContext(hardware=ultra, image="vllm/vllm-openai:v0.32.0", options={"image_tag": "1.21.2.0"})
    )
    assert cmd.image == "ghcr.io/quic/cloud_ai_inference_vllm:1.21.2.0"
    assert "qaic.image" in {f.code for f in cmd.findings}


def test_context_length_left_to_vllm_is_flagged_not_fatal(ultra):
    cmd = translate_qaic(["vllm", "serve", "m", "--max-model-len", "auto"], DialectContext(hardware=ultra))
    assert "qaic.max-model-len" in {f.code for f in cmd.findings}
    assert "ctx_len" not in cmd.precompile[0].kwargs
    readable = translate_qaic(["vllm", "serve", "m", "--max-model-len", "4k"], DialectContext(hardware=ultra))
    assert readable.precompile[0].kwargs["ctx_len"] == 4000


def test_auto_device_mode_is_kept(ultra):
    source = with_config({"override_qaic_config": {"num_devices": 4}}, *SPEC)
    cmd = translate_qaic(source, DialectContext(hardware=ultra))
    config = parse_vllm_argv(cmd.argv).get_json("--additional-config")
    assert config["override_qaic_config"] == {"num_devices": 4, "num_cores": 8}
    assert config["draft_override_qaic_config"] == {"num_devices": 4, "num_cores": 8}
    assert cmd.precompile[0].kwargs["num_devices"] == 4


def test_decode_batch_and_mm_embeds_notes():
    found = codes([*BASE[:-6], "--max-num-seqs", "64", "--enable-mm-embeds"])
    assert found["qaic.decode-batch"][0].severity == "note"
    assert found["qaic.mm-embeds"][0].severity == "note"
    offload = codes(with_config({"override_qaic_config": {"kv_offload": True}}, "--enable-mm-embeds"))
    assert "qaic.mm-embeds" not in offload
