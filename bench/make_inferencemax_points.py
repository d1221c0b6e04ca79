"""Writes bench/data/inferencemax-v1.jsonl: InferenceMAX v1's published single-node runs as perf-points
lines. Half of them (every other line per engine and device) is a calibration source
(``servekit.perf.constants.INFERENCEMAX_CALIBRATION``); the other half is scored apart by
``bench/bench_perf_points.py``.

The rows are SemiAnalysis InferenceMAX v1's aggregated results (October 2025), as copied into the
public fork github:faradawn/InferenceMAX at commit 7a175041fc1b103832870e8ff4ec3b0b1ff5dd2f
(``official_data/agg_{gptoss,dsr1}_{1k1k,1k8k,8k1k}.json``): gpt-oss-120b (MXFP4) on H100, H200, B200,
MI300X, MI325X and MI355X with vLLM and on H200 and B200 with TensorRT-LLM; DeepSeek-R1-0528 (FP8) on
H200, B200, MI300X, MI325X and MI355X with SGLang and on H200 and B200 with TensorRT-LLM; NVIDIA's
NVFP4 export on B200 with SGLang and TensorRT-LLM; AMD's MXFP4 export on MI355X with SGLang. Each row
names the checkpoint and gives the GPU, TP, EP, data-parallel attention, the client concurrency,
per-GPU output tokens/s and the median TTFT and TPOT (seconds). The sequence lengths are the file's
(1k1k = 1024 in, 1024 out; 1k8k; 8k1k).

What each line states beyond the row, and where it comes from (the InferenceMAX scripts, runners and
configs the fork holds at 9765f603d90684dfd42564f5969ed9e52ea4ba98, its last upstream commit
(2025-11-06), taken to be those of the published runs; the fork's own later commits change only how
its B200 SGLang server and client start):

* the client (``benchmarks/*.sh``, ``runners/launch_*.sh``): ``benchmark_serving.py --dataset-name
  random --random-input-len ISL --random-output-len OSL --random-range-ratio 0.8 --num-prompts N
  --max-concurrency CONC --request-rate inf --ignore-eos`` (the ratio is
  ``.github/workflows/benchmark-tmpl.yml``'s default). Its random dataset draws each length uniformly
  from the integers ``[int(0.8 L), L]``, so a line's lengths are those means (922 of 1024, 7373 of
  8192) and not fixed (``fixed_lengths`` false). N is ``CONC x 10``, except on the two runner pools
  whose launcher sets it per checkpoint (``prompts_per_client``);
* the engine release: the image ``.github/configs/{nvidia,amd}-master.yaml`` names for the
  configuration (vLLM 0.11.0 on NVIDIA, ROCm vLLM 0.10.1, SGLang 0.5.2 / 0.5.3, TensorRT-LLM
  1.1.0rc2 / 1.2.0rc0; none for TensorRT-LLM's gpt-oss development image);
* the scheduler limits and KV cache format each script passes (``launch``), vLLM's
  ``--async-scheduling``, which every vLLM script passes, and SGLang's reads of new requests:
  ``--scheduler-recv-interval`` 10, or 30 from 16 clients, on B200, ``--num-continuous-decode-steps
  4`` on AMD; what a script leaves to the engine stays unstated (``None``).

Rows run with data-parallel attention are written with ``dp`` = TP on ``gpu_count`` = TP (the
perf-points reading of attention DP inside the TP group).

Usage: python bench/make_inferencemax_points.py GIT_DIR
(GIT_DIR: a clone of github:faradawn/InferenceMAX holding commits 7a17504 and 9765f60.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))

from make_public_vllm_points import GPT_OSS_120B  # noqa: E402
from servekit.atomic import write_bytes_atomic  # noqa: E402

OUT = REPO / "bench" / "data" / "inferencemax-v1.jsonl"
COMMIT = "7a175041fc1b103832870e8ff4ec3b0b1ff5dd2f"
FILES = {(model, isl, osl): f"official_data/agg_{model}_{name}.json"
         for model in ("gptoss", "dsr1")
         for name, isl, osl in (("1k1k", 1024, 1024), ("1k8k", 1024, 8192), ("8k1k", 8192, 1024))}
RANGE_RATIO = 0.8
PROMPTS_PER_CLIENT = 10

DEEPSEEK_R1 = {"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168, "num_hidden_layers": 61,
               "num_attention_heads": 128, "num_key_value_heads": 128, "head_dim": None, "intermediate_size": 18432,
               "vocab_size": 129280, "tie_word_embeddings": False, "num_experts": 256, "num_experts_per_tok": 8,
               "moe_intermediate_size": 2048, "n_shared_experts": 1, "first_k_dense_replace": 3,
               "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
               "v_head_dim": 128, "sliding_window": None, "full_attention_layers": 61,
               "linear_attention_layers": None, "params_total_b": 671.0, "params_active_b": 37.0}
"""DeepSeek-R1-0528's config.json (DeepseekV3ForCausalLM), 671 B parameters of which 37 B active."""

ENGINES = {"vllm": "vllm", "sglang": "sglang", "trt": "trtllm"}
GPUS = {"b200-trt": "b200"}
"""InferenceMAX's runner pools: TensorRT-LLM's B200 runs ran on the ``b200-trt`` pool of B200s."""
MODELS = {"openai/gpt-oss-120b": ("gptoss", GPT_OSS_120B, "mxfp4"),
          "deepseek-ai/DeepSeek-R1-0528": ("dsr1", DEEPSEEK_R1, "fp8"),
          "nvidia/DeepSeek-R1-0528-FP4-V2": ("dsr1", DEEPSEEK_R1, "nvfp4"),
          "amd/DeepSeek-R1-0528-MXFP4-Preview": ("dsr1", DEEPSEEK_R1, "mxfp4")}
"""The checkpoints the rows name (their ``model``): the file family, config facts and weight format."""
AMD = ("mi300x", "mi325x", "mi355x")
PROMPT_POOLS = {"b200": ("nvidia/DeepSeek-R1-0528-FP4", "deepseek-ai/DeepSeek-R1-0528"),
                "mi355x": ("amd/DeepSeek-R1-0528-MXFP4-Preview", "deepseek-ai/DeepSeek-R1-0528")}
"""The runner pools whose launcher sets the prompt count per checkpoint (``launch_b200-nvd.sh``,
``launch_mi355x-amd.sh``) and the checkpoint names it compares against, as it spells them."""


def launch(name: str, gpu: str, framework: str, isl: int, osl: int, conc: int) -> dict:
    """Release, KV cache format, scheduler limits and SGLang's request reads of one configuration's script."""
    return {"scheduler_recv_interval": None, "num_continuous_decode_steps": None,
            **limits(name, gpu, framework, isl, osl, conc), **reads(gpu, framework, conc)}


def reads(gpu: str, framework: str, conc: int) -> dict:
    """SGLang's request reads: dsr1_*_b200_docker.sh read every 10 turns, every 30 from 16 clients;
    dsr1_*_mi3*_docker.sh run 4 decode steps a turn."""
    if framework != "sglang":
        return {}
    if gpu in AMD:
        return {"num_continuous_decode_steps": 4}
    return {"scheduler_recv_interval": 30 if conc >= 16 else 10} if gpu == "b200" else {}


def limits(name: str, gpu: str, framework: str, isl: int, osl: int, conc: int) -> dict:
    """Release, KV cache format and scheduler limits of one configuration's script."""
    if framework == "vllm":
        if gpu in AMD:  # gptoss_fp4_mi3*_docker.sh: engine defaults
            return {"engine_version": "0.10.1", "kv_cache_dtype": None, "max_num_seqs": None,
                    "max_num_batched_tokens": None}
        # gptoss_fp4_{h100,h200,b200}: max-num-batched-tokens 8192; max-num-seqs CONC (512 on B200)
        return {"engine_version": "0.11.0", "kv_cache_dtype": None, "max_num_seqs": 512 if gpu == "b200" else conc,
                "max_num_batched_tokens": 8192}
    if framework == "sglang":
        if gpu in AMD:  # dsr1_*_mi3*_docker.sh: chunked prefill 196608 (32768 for fp4 8k1k past 32 clients)
            small = MODELS[name][2] == "mxfp4" and (isl, osl) == (8192, 1024) and conc > 32
            return {"engine_version": "0.5.2", "kv_cache_dtype": None, "max_num_seqs": None,
                    "max_num_batched_tokens": 32768 if small else 196608}
        if gpu == "h200":  # dsr1_fp8_h200_slurm.sh
            return {"engine_version": "0.5.2", "kv_cache_dtype": None,
                    "max_num_seqs": 512 if (isl, osl) == (1024, 1024) else 256, "max_num_batched_tokens": 32768}
        if MODELS[name][2] == "fp8":  # dsr1_fp8_b200_docker.sh
            return {"engine_version": "0.5.3", "kv_cache_dtype": "fp8", "max_num_seqs": 128,
                    "max_num_batched_tokens": 32768}
        return {"engine_version": "0.5.3", "kv_cache_dtype": "fp8", "max_num_seqs": 256,  # dsr1_fp4_b200_docker.sh
                "max_num_batched_tokens": 16384}
    if MODELS[name][0] == "gptoss":  # gptoss_fp4_{h200,b200}_trt_slurm.sh: max_num_tokens 20000
        if gpu == "h200":
            return {"engine_version": None, "kv_cache_dtype": None, "max_num_seqs": conc,
                    "max_num_batched_tokens": 20000}
        return {"engine_version": "1.2.0rc0", "kv_cache_dtype": "fp8", "max_num_seqs": 512,
                "max_num_batched_tokens": 20000}
    # dsr1_{fp8,fp4}_{h200,b200}_trt_slurm.sh: one prompt and the decodes a step
    return {"engine_version": "1.1.0rc2", "kv_cache_dtype": "fp8", "max_num_seqs": None,
            "max_num_batched_tokens": (conc + isl + 64 + 63) // 64 * 64}


def prompts_per_client(pool: str, name: str, osl: int) -> int:
    """The client's prompts per concurrent client: 20 (1k8k) or 50 where the pool's launcher names the
    checkpoint, 10 everywhere else (``launch_*.sh``)."""
    if name in PROMPT_POOLS.get(pool, ()):
        return 20 if osl == 8192 else 50
    return PROMPTS_PER_CLIENT


def mean_length(length: int) -> int:
    """The mean of the random dataset's uniform integer lengths in ``[int(ratio x L), L]``, rounded
    half up (922 of 1024, 7373 of 8192)."""
    return (int(length * RANGE_RATIO) + length + 1) // 2


def point(row: dict, isl: int, osl: int) -> dict:
    name = row["model"]
    model, facts, fmt = MODELS[name]
    gpu = GPUS.get(row["hw"], row["hw"])
    tp, conc = int(row["tp"]), int(row["conc"])
    dpa = str(row["dp_attention"]).lower() == "true"
    stated = launch(name, gpu, row["framework"], isl, osl, conc)
    ident = (f"inferencemax-v1-{model}-{row['precision']}-{row['hw']}-{row['framework']}-tp{tp}-ep{row['ep']}"
             f"{'-dpa' if dpa else ''}-{isl}-{osl}-c{conc}")
    return {
        "id": ident, "engine": ENGINES[row["framework"]], "engine_version": stated["engine_version"], "model": name,
        "config_facts": facts, "weights_precision": fmt, "kv_cache_dtype": stated["kv_cache_dtype"], "gpu": gpu,
        "gpu_count": tp, "nodes": 1, "tp": tp, "pp": 1, "dp": tp if dpa else 1, "ep": int(row["ep"]),
        "max_num_seqs": stated["max_num_seqs"], "max_num_batched_tokens": stated["max_num_batched_tokens"],
        "async_scheduling": True if row["framework"] == "vllm" else None,
        "scheduler_recv_interval": stated["scheduler_recv_interval"],
        "num_continuous_decode_steps": stated["num_continuous_decode_steps"], "spec_decoding": None,
        "workload": {"input_len": mean_length(isl), "output_len": mean_length(osl), "concurrency": conc,
                     "request_rate": None, "offline": False,
                     "num_prompts": conc * prompts_per_client(row["hw"], name, osl),
                     "fixed_lengths": False},
        "measured": {"output_throughput_tok_s": round(row["output_tput_per_gpu"] * tp, 3),
                     "ttft_ms": round(row["median_ttft"] * 1e3, 3), "ttft_stat": "median",
                     "tpot_ms": round(row["median_tpot"] * 1e3, 4), "tpot_stat": "median"},
        "source": f"github:faradawn/InferenceMAX {FILES[(model, isl, osl)]} @ {COMMIT} (InferenceMAX v1 aggregate)",
        "source_group": "inferencemax-v1", "confidence": "medium",
    }


def rows(git_dir: Path) -> list[dict]:
    out = []
    for (model, isl, osl), path in FILES.items():
        text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{COMMIT}:{path}"], check=True,
                              capture_output=True, text=True).stdout
        out += [point(row, isl, osl) for row in json.loads(text)
                if row["model"] in MODELS and row["framework"] in ENGINES]
    return sorted(out, key=lambda p: p["id"])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    points = rows(Path(args[0]))
    write_bytes_atomic(OUT, "".join(json.dumps(p) + "\n" for p in points).encode())
    print(f"wrote {len(points)} lines to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
