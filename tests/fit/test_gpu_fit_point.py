"""bench/gpu_fit_point.py writes kv-points lines in the structured schema the points reader takes,
and bench/gpu_fit_check.sh stays ready to run (bash -n and shellcheck clean).

The start-up log here is text written by the test in the form vLLM prints it (no GPU is needed
to read a log); the script and the reader run for real.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from servekit.atomic import write_text_atomic
from servekit.fit.point_fields import normalized_point
from servekit.fit.points import predict_point

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "gpu_fit_point.py"
CHECK = REPO / "bench" / "gpu_fit_check.sh"
SPEC = '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'
LOG = """INFO 12-02 10:00:01 [gpu_worker.py:104] total_gpu_memory (23.58GiB)
INFO 12-02 10:00:05 [gpu_model_runner.py:1700] Model loading took 1.9 GiB and 2.1 seconds
INFO 12-02 10:00:09 [gpu_worker.py:298] Available KV cache memory: 17.52 GiB
INFO 12-02 10:00:09 [kv_cache_utils.py:1087] GPU KV cache size: 573,984 tokens
"""


def _model(tmp_path: Path, quantization: dict | None = None) -> Path:
    config = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 8, "num_attention_heads": 16,
              "num_key_value_heads": 4, "head_dim": 64, "hidden_size": 1024, "intermediate_size": 2816,
              "vocab_size": 32000, "torch_dtype": "bfloat16", "max_position_embeddings": 32768}
    if quantization:
        config["quantization_config"] = quantization
    model = tmp_path / "dense-gqa"
    write_text_atomic(model / "config.json", json.dumps(config))
    return model


def _point(tmp_path: Path, gpu: str, args: list[str], quantization: dict | None = None) -> dict:
    log = tmp_path / "launch.log"
    write_text_atomic(log, LOG)
    out = subprocess.run([sys.executable, str(SCRIPT), "--log", str(log), "--model", str(_model(tmp_path, quantization)),
                          "--gpu", gpu, "--vllm", "0.19.0", "--", *args],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_point_names_the_device_table_id_not_the_gpu_text(tmp_path):
    point = _point(tmp_path, "NVIDIA GeForce RTX 3090", ["--max-model-len", "16384"])
    assert point["gpu_model"] == "rtx_3090"
    assert "gpu" not in point
    assert normalized_point(point)["gpu_model"] == "rtx_3090"


def test_a_gpu_without_a_table_row_keeps_its_measured_memory_only(tmp_path):
    point = _point(tmp_path, "NVIDIA Imaginary 7000", ["--max-model-len", "16384"])
    assert "gpu_model" not in point and point["gpu_mem_gib"] == 23.58


def test_spec_config_stays_one_json_word_and_the_line_predicts(tmp_path):
    args = ["--max-model-len", "16384", "--tensor-parallel-size", "2", "--speculative-config", SPEC,
            "--enforce-eager"]
    point = _point(tmp_path, "NVIDIA GeForce RTX 3090", args)
    assert point["tp"] == 2 and point["enforce_eager"] is True
    spec = [entry for entry in point["extra_flags"] if entry.startswith("--speculative-config")]
    assert len(spec) == 1
    flag, value = shlex.split(spec[0])
    assert flag == "--speculative-config" and json.loads(value)["num_speculative_tokens"] == 3
    assert not any(entry.startswith(("--tensor-parallel-size", "--max-model-len")) for entry in point["extra_flags"])
    result = predict_point(point)
    assert result["kv_tokens"] and result["weights_gib_per_rank"] == 1.9


@pytest.mark.parametrize("config,expected", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128}, {"method": "int4", "bits": 4, "group_size": 128}),
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, {"method": "fp8", "bits": 8,
                                                                 "weight_block_size": [128, 128]}),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, {"method": "nvfp4", "bits": 4}),
    ({"quant_method": "compressed-tensors",
      "config_groups": {"g0": {"weights": {"num_bits": 8, "type": "int"}}}}, {"method": "int8", "bits": 8}),
])
def test_quantization_config_becomes_the_structured_field(tmp_path, config, expected):
    point = _point(tmp_path, "NVIDIA H100 80GB HBM3", ["--max-model-len", "4096"], config)
    assert point["quantization"] == expected
    assert normalized_point(point)["quantization"] == expected


def test_gpu_fit_check_script_is_ready():
    subprocess.run(["bash", "-n", str(CHECK)], check=True)
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed on this machine")
    out = subprocess.run(["shellcheck", str(CHECK)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
