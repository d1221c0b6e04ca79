"""Writes bench/data/wmx-l4-qwen2.5-0.5b.jsonl: a public concurrency sweep of vLLM as perf-points
lines, an evaluation source of fixed-length closed loops (no constant is fitted on it;
``bench/bench_perf_points.py`` scores it apart).

The sweep (https://ai.wmx.dev/benchmarks, "serving/raw-vllm"): Qwen/Qwen2.5-0.5B-Instruct in BF16
on one NVIDIA L4, vLLM 0.23.0 (V1 engine) with ``--gpu-memory-utilization 0.6 --max-model-len
8192``, ``vllm bench serve`` with 256-token prompts and 128-token outputs, ``--ignore-eos``,
``--request-rate inf`` at a fixed ``--max-concurrency`` of 1 to 32: every request has exactly its
lengths (``workload.fixed_lengths``). Each line keeps the page's output tokens/s and median TTFT;
the page gives inter-token latency, not TPOT, so no TPOT is written. The page does not give the
number of prompts (left unstated). The model's facts are its config.json's
(Qwen2ForCausalLM: hidden 896, 24 layers, 14 heads, 2 KV heads, head_dim 64, intermediate 4864,
vocabulary 151,936, tied embeddings; 0.49 B parameters).

Usage: python bench/make_wmx_l4_points.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from servekit.atomic import write_bytes_atomic  # noqa: E402

OUT = REPO / "bench" / "data" / "wmx-l4-qwen2.5-0.5b.jsonl"
SOURCE = "https://ai.wmx.dev/benchmarks (serving/raw-vllm concurrency sweep, commit 8e78aaa)"
FACTS = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "num_hidden_layers": 24,
         "num_attention_heads": 14, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 4864,
         "vocab_size": 151936, "tie_word_embeddings": True, "num_experts": None, "num_experts_per_tok": None,
         "full_attention_layers": 24, "linear_attention_layers": None, "params_total_b": 0.494,
         "params_active_b": 0.494}
SWEEP = ((1, 168, 27.0), (2, 367, 37.8), (4, 698, 50.1), (8, 1312, 60.9), (16, 2277, 103.8), (32, 3773, 135.3))
"""(concurrency, output tokens/s, median TTFT ms) of the page's table."""


def line(concurrency: int, throughput: float, ttft: float) -> dict:
    return {
        "id": f"wmx-l4-qwen2.5-0.5b-c{concurrency}", "engine": "vllm", "engine_version": "0.23.0",
        "model": "Qwen/Qwen2.5-0.5B-Instruct", "config_facts": FACTS, "weights_precision": "bf16",
        "kv_cache_dtype": None, "gpu": "l4", "gpu_count": 1, "nodes": 1, "tp": 1, "pp": 1, "dp": 1, "ep": None,
        "max_num_seqs": None, "max_num_batched_tokens": None, "spec_decoding": None,
        "workload": {"input_len": 256, "output_len": 128, "concurrency": concurrency, "request_rate": None,
                     "offline": False, "num_prompts": None, "fixed_lengths": True},
        "measured": {"output_throughput_tok_s": float(throughput), "ttft_ms": ttft, "ttft_stat": "median",
                     "tpot_ms": None, "tpot_stat": None},
        "source": SOURCE, "source_group": "wmx-l4", "confidence": "medium",
    }


def main() -> int:
    text = "".join(json.dumps(line(*row)) + "\n" for row in SWEEP)
    write_bytes_atomic(OUT, text.encode())
    print(f"wrote {len(SWEEP)} lines to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
