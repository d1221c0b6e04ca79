"""vLLM Ascend dialect: brand image, NPU env, ModelSlim quantization and MTP spelling rules."""

from __future__ import annotations

import pytest
from testing.shared import SHARED

from servekit.catalog.documents import bundled_catalog_dir, read_yaml
from servekit.engines.ascend import ENGINE as DIALECT
from servekit.engines.ascend.translate import RECOMMENDED_ENV, translate_ascend, validate_ascend
from servekit.engines.common.translation import DialectContext

SEED_RECIPE = SHARED / "seeds" / "003_qwen3.8-27b_recipe.yaml"


@pytest.fixture(scope="module")
def profiles() -> dict:
    return read_yaml(bundled_catalog_dir() / "taxonomy.yaml")["hardware_profiles"]


@pytest.fixture(scope="module")
def w8a8() -> dict:
    if not SEED_RECIPE.is_file():
        pytest.skip(f"{SEED_RECIPE} is not present")
    variants = read_yaml(SEED_RECIPE)["variants"]
    return next(v for v in variants.values() if "ascend" in (v.get("extra_args") or []))


def npu(profiles, **kwargs) -> DialectContext:
    return DialectContext(hardware=profiles["ascend_950pr"], hardware_id="ascend_950pr", **kwargs)


def codes(findings) -> dict[str, str]:
    return {f.code: f.severity for f in findings}


def test_seed_w8a8_launch_keeps_its_argv_and_env(profiles, w8a8):
    argv = [
        "vllm",
        "serve",
        w8a8["model_id"],
        "--tensor-parallel-size",
        "1",
        *w8a8["extra_args"],
        "--speculative-config",
        '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}',
    ]
    cmd = translate_ascend(argv, npu(profiles, env=dict(w8a8["extra_env"]), engine_version="0.23.0"))
    assert cmd.argv == tuple(argv)
    assert cmd.env == w8a8["extra_env"]
    assert cmd.image == "quay.io/ascend/vllm-ascend:v0.23.0"
    assert cmd.valid, cmd.findings
    assert "ascend.mtp-spelling" not in codes(cmd.findings)


def test_recommended_env_fills_gaps_without_overriding(profiles):
    cmd = translate_ascend(["vllm", "serve", "m"], npu(profiles, env={"HCCL_BUFFSIZE": "1024"}))
    assert cmd.env["HCCL_BUFFSIZE"] == "1024"
    assert {k: cmd.env[k] for k in RECOMMENDED_ENV if k != "HCCL_BUFFSIZE"} == {
        k: v for k, v in RECOMMENDED_ENV.items() if k != "HCCL_BUFFSIZE"
    }
    bare = translate_ascend(["vllm", "serve", "m"], npu(profiles, options={"recommended_env": False}))
    assert bare.env == {}


def test_nvidia_image_is_replaced_with_the_brand_image(profiles):
    cmd = translate_ascend(
        ["vllm", "serve", "m"], npu(profiles, image="vllm/vllm-openai:v0.32.0", options={"image_tag": "qwen3.8-a5"})
    )
    assert cmd.image == "quay.io/ascend/vllm-ascend:qwen3.8-a5"
    assert codes(cmd.findings)["ascend.image"] == "warning"
    kept = translate_ascend(["vllm", "serve", "m"], npu(profiles, image="quay.io/ascend/vllm-ascend:nightly-main-a5"))
    assert kept.image == "quay.io/ascend/vllm-ascend:nightly-main-a5"


def test_ascend_quantization_off_ascend_is_an_error(profiles):
    argv = ["vllm", "serve", "m", "--quantization", "ascend"]
    found = validate_ascend(argv, DialectContext(hardware=profiles["h200"], hardware_id="h200"))
    assert codes(found)["ascend.quantization-hardware"] == "error"
    assert "h200" in next(f.message for f in found if f.code == "ascend.quantization-hardware")
    assert "ascend.quantization-hardware" not in codes(validate_ascend(argv, npu(profiles)))


def test_modelslim_checkpoint_needs_ascend_quantization(profiles):
    found = validate_ascend(["vllm", "serve", "m"], npu(profiles, options={"modelslim": True}))
    assert codes(found)["ascend.modelslim"] == "error"


def test_cuda_only_quantization_on_npu(profiles):
    found = validate_ascend(["vllm", "serve", "m", "--quantization", "modelopt_fp4"], npu(profiles))
    assert codes(found)["ascend.cuda-quantization"] == "error"


def test_mtp_gets_a_note_suggesting_the_ascend_spelling(profiles):
    found = validate_ascend(
        ["vllm", "serve", "m", "--speculative-config", '{"method":"mtp","num_speculative_tokens":3}'], npu(profiles)
    )
    note = next(f for f in found if f.code == "ascend.mtp-spelling")
    assert note.severity == "note" and "qwen3_5_mtp" in note.fix


def test_cuda_env_is_renamed_or_reported(profiles):
    cmd = translate_ascend(
        ["vllm", "serve", "m"], npu(profiles, env={"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_DEBUG": "INFO"})
    )
    assert cmd.env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1"
    assert "CUDA_VISIBLE_DEVICES" not in cmd.env
    assert [(u.flag, u.value) for u in cmd.untranslated] == [("NCCL_DEBUG", "INFO")]


def test_modelscope_hub_sets_the_switch(profiles):
    cmd = DIALECT.translate(
        ["vllm", "serve", "org/m", "--quantization", "ascend"], npu(profiles, options={"model_hub": "modelscope"})
    )
    assert cmd.env["VLLM_USE_MODELSCOPE"] == "True"
    hinted = DIALECT.translate(["vllm", "serve", "org/m", "--quantization", "ascend"], npu(profiles))
    assert "ascend.modelscope" in codes(hinted.findings)


def test_non_ascend_hardware_is_rejected(profiles):
    found = DIALECT.validate(["vllm", "serve", "m"], DialectContext(hardware=profiles["h200"], hardware_id="h200"))
    assert codes(found)["ascend.hardware"] == "error"


def test_registered_engine_accepts_modelslim_quantization():
    from servekit.engines.registry import get_engine

    argv = [
        "vllm",
        "serve",
        "org/m",
        "--quantization",
        "ascend",
        "--speculative-config",
        '{"method":"mtp","num_speculative_tokens":3}',
    ]
    result = get_engine("vllm-ascend").lint(argv)
    assert result.valid, result.findings
    assert "ascend.mtp-spelling" in codes(result.findings)
    assert not get_engine("vllm").lint(argv).valid
