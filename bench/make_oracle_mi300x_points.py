"""Writes bench/data/oracle-mi300x-llama-3.1-405b.jsonl: Oracle's published vLLM runs of Llama 3.1
405B FP8 on one BM.GPU.MI300X.8 (eight AMD Instinct MI300X, TP 8; blog post of 2024-10-10) as
perf-points lines: an evaluation source on an AMD part, which neither calibration source holds.
No constant is fitted on it; ``bench/bench_perf_points.py`` scores it apart.

- The latency table (vLLM's ``benchmark_latency.py``, 128 prompt and 128 output tokens, batch
  sizes 1 to 256): a batch of ``B`` prompts at once is written as ``B`` clients each sending one
  request (concurrency ``B``, ``B`` prompts); its output throughput is the page's (``B x 128`` over
  the batch's latency).
- The throughput table's two rows of 128-token prompts (``benchmark_throughput.py``, its default
  1,000 prompts, all at once): 128 and 2,048 output tokens.

The page names neither the vLLM release nor the checkpoint: ``engine_version`` is left unstated,
and the model is Llama 3.1 405B with FP8 weights, whose config.json facts the visible perf-points
file carries (``nvidia/Llama-3.1-405B-Instruct-FP8``).

Usage: python bench/make_oracle_mi300x_points.py [VISIBLE.jsonl]
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))

from make_trtllm_overview_points import config_facts, write_from_visible  # noqa: E402

OUT = REPO / "bench" / "data" / "oracle-mi300x-llama-3.1-405b.jsonl"
SOURCE = "https://blogs.oracle.com/cloud-infrastructure/serving-llama-31-405b-model-with-amd-mi300x-gpus"
FACTS_OF = "nvidia/Llama-3.1-405B-Instruct-FP8"
LATENCY = ((1, 36), (2, 71), (4, 137), (8, 258), (16, 468), (32, 798), (64, 1184), (128, 1585), (256, 1846))
"""(batch size, output tokens/s) of the page's latency table, 128:128."""
THROUGHPUT = ((128, 128, 1993), (128, 2048, 2794))
"""(input, output, output tokens/s) of the page's throughput table."""


def line(ident: str, facts: dict, workload: dict, figure: float) -> dict:
    return {
        "id": ident, "engine": "vllm", "engine_version": None, "model": "meta-llama/Llama-3.1-405B-Instruct-FP8",
        "config_facts": facts, "weights_precision": "fp8", "kv_cache_dtype": None, "gpu": "mi300x",
        "gpu_count": 8, "nodes": 1, "tp": 8, "pp": 1, "dp": 1, "ep": None, "max_num_seqs": None,
        "max_num_batched_tokens": None, "spec_decoding": None, "workload": workload,
        "measured": {"output_throughput_tok_s": float(figure), "ttft_ms": None, "ttft_stat": None,
                     "tpot_ms": None, "tpot_stat": None},
        "source": SOURCE, "source_group": "oracle-mi300x", "confidence": "medium",
    }


def lines(points: list[dict]) -> list[dict]:
    facts = config_facts(points)[FACTS_OF]
    out = [line(f"oracle-mi300x-405b-latency-batch{batch}", facts,
                {"input_len": 128, "output_len": 128, "concurrency": batch, "request_rate": None, "offline": False,
                 "num_prompts": batch}, figure) for batch, figure in LATENCY]
    out += [line(f"oracle-mi300x-405b-throughput-{isl}-{osl}", facts,
                 {"input_len": isl, "output_len": osl, "concurrency": None, "request_rate": None, "offline": True,
                  "num_prompts": 1000}, figure) for isl, osl, figure in THROUGHPUT]
    return out


def main(argv: list[str]) -> int:
    return write_from_visible(argv, lines, OUT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
