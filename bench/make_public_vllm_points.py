"""Writes bench/data/public-vllm-runs.jsonl: single vLLM serving runs published in public issue
threads, as perf-points lines, an evaluation source (no constant is fitted on it;
``bench/bench_perf_points.py`` scores it apart). Each line keeps only the figures its thread
prints; what the thread leaves unstated stays unstated (``None``).

* NVIDIA/Model-Optimizer issue 2015 (2026-07-24): a Mistral Small 24B checkpoint in BF16 on one
  B200, vLLM 0.25.1 with FlashInfer 0.6.13, ``vllm bench serve`` on the random dataset, 300-token
  prompts and 64-token outputs at a concurrency of 64: median TTFT 547 ms, median TPOT 13.7 ms
  (its BF16 row; the FP8 and NVFP4 rows are its own re-quantized checkpoints, whose layer formats
  the thread does not list). The thread gives requests/s, not output tokens/s, and does not say
  whether ``--ignore-eos`` was passed, so no throughput is written; the prompts are of one length
  (the random dataset's default range ratio of 0) and the outputs are taken to reach their 64
  tokens (``workload.fixed_lengths``; random-token prompts rarely end early).
* vllm-project/vllm pull request 23696 (2025-08): gpt-oss-120b at TP 8 on eight B200
  (``--max-model-len 32768``), FlashInfer's MXFP4 MoE path, ``vllm bench serve --backend vllm``
  on ShareGPT, 1,000 prompts at once (mean lengths 215.3 in, 197.1 out: 215,312 and 197,144
  tokens): 7,404.72 output tokens/s, median TTFT 3,229.56 ms, median TPOT 57.07 ms. A build of the
  main branch, no release named (``engine_version`` left out: the newest rules apply).
* TheTom/atlas, docs/campaigns/hopper-atlas-vs-vllm-2026-09/RENTAL-H100-REPORT.md (2026-09-05) and
  issue Avarok-Cybersecurity/atlas#899: Qwen/Qwen3.8-27B-FP8 (block-scaled FP8) on one H100 80GB
  HBM3, vLLM 0.28.0 with 512 sequence slots (``--max-num-seqs 512``), chunked prefill, BF16 KV
  cache, speculation off. Its latency ladder: every request 1,193 prompt and 256 output tokens
  (``finish_reason: length``), concurrency 1 and 16, three repetitions; output tokens/s 76.928
  and 790.507, TTFT p50 285.632 and 1,324.001 ms, TPOT p50 11.928 and 15.056 ms (the report's
  latencies are the means of the three repetitions' medians). Its agent ladder (4,593 prompt and
  512 output tokens, from the issue): 78.451 and 638.758 output tokens/s; no latencies printed.

The models' facts are their config.json's: Qwen3.8-27B (``servekit/facts/data``: 64 layers, 48 of
them Gated DeltaNet linear attention and 16 full attention with 24 heads, 4 KV heads, head_dim 256;
hidden 5120, intermediate 17,408, vocabulary 248,320, untied; 27 B parameters), Mistral Small 24B (MistralForCausalLM text model:
hidden 5120, 40 layers, 32 heads, 8 KV heads, head_dim 128, intermediate 32,768, vocabulary
131,072, untied; 23.57 B parameters) and gpt-oss-120b (hidden 2880, 36 layers alternating
128-token sliding-window and full attention, 64 heads, 8 KV heads, head_dim 64, 128 experts of
which 4 per token, intermediate 2880, vocabulary 201,088; 117 B parameters, 5.1 B active).

Usage: python bench/make_public_vllm_points.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from servekit.atomic import write_bytes_atomic  # noqa: E402

OUT = REPO / "bench" / "data" / "public-vllm-runs.jsonl"

MISTRAL_24B = {"architectures": ["MistralForCausalLM"], "hidden_size": 5120, "num_hidden_layers": 40,
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 32768,
               "vocab_size": 131072, "tie_word_embeddings": False, "num_experts": None, "num_experts_per_tok": None,
               "full_attention_layers": 40, "linear_attention_layers": None, "params_total_b": 23.57,
               "params_active_b": 23.57}
GPT_OSS_120B = {"architectures": ["GptOssForCausalLM"], "hidden_size": 2880, "num_hidden_layers": 36,
                "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
                "vocab_size": 201088, "tie_word_embeddings": False, "num_experts": 128, "num_experts_per_tok": 4,
                "moe_intermediate_size": 2880, "n_shared_experts": 0, "first_k_dense_replace": 0,
                "kv_lora_rank": None, "q_lora_rank": None, "qk_rope_head_dim": None, "qk_nope_head_dim": None,
                "v_head_dim": None, "sliding_window": 128, "full_attention_layers": 18,
                "linear_attention_layers": None, "params_total_b": 117.0, "params_active_b": 5.1}

QWEN38_27B = {"architectures": ["Qwen3_5ForConditionalGeneration"], "hidden_size": 5120, "num_hidden_layers": 64,
              "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 17408,
              "vocab_size": 248320, "tie_word_embeddings": False, "num_experts": None, "num_experts_per_tok": None,
              "full_attention_layers": 16, "linear_attention_layers": 48, "params_total_b": 27.0,
              "params_active_b": 27.0}
ATLAS = ("github:TheTom/atlas docs/campaigns/hopper-atlas-vs-vllm-2026-09/RENTAL-H100-REPORT.md "
         "(vLLM 0.28.0 lat01 rows)")
ATLAS_AGENT = "github:Avarok-Cybersecurity/atlas issue 899 (vLLM agent ladder, C1 / C16 output tokens/s)"


def point(ident: str, version: str | None, model: str, facts: dict, precision: str, gpu: str, tp: int,
          workload: dict, measured: dict, source: str, max_num_seqs: int | None = None) -> dict:
    return {
        "id": ident, "engine": "vllm", "engine_version": version, "model": model, "config_facts": facts,
        "weights_precision": precision, "kv_cache_dtype": None, "gpu": gpu, "gpu_count": tp, "nodes": 1, "tp": tp,
        "pp": 1, "dp": 1, "ep": None, "max_num_seqs": max_num_seqs, "max_num_batched_tokens": None, "spec_decoding": None,
        "workload": workload, "measured": measured, "source": source, "source_group": "public-vllm-runs",
        "confidence": "medium",
    }


POINTS = (
    point("modelopt-2015-mistral-small-24b-b200-c64", "0.25.1", "mistralai/Mistral-Small-24B-Instruct-2501",
          MISTRAL_24B, "bf16", "b200", 1,
          {"input_len": 300, "output_len": 64, "concurrency": 64, "request_rate": None, "offline": False,
           "num_prompts": None, "fixed_lengths": True},
          {"output_throughput_tok_s": None, "ttft_ms": 547.0, "ttft_stat": "median", "tpot_ms": 13.7,
           "tpot_stat": "median"},
          "github:NVIDIA/Model-Optimizer issue 2015 (BF16 row of its vllm bench serve table)"),
    point("vllm-23696-gpt-oss-120b-b200-tp8", None, "openai/gpt-oss-120b", GPT_OSS_120B, "mxfp4", "b200", 8,
          {"input_len": 215, "output_len": 197, "concurrency": None, "request_rate": None, "offline": True,
           "num_prompts": 1000},
          {"output_throughput_tok_s": 7404.72, "ttft_ms": 3229.56, "ttft_stat": "median", "tpot_ms": 57.07,
           "tpot_stat": "median"},
          "github:vllm-project/vllm pull request 23696 (FlashInfer run of its description)"),
    *(point(f"atlas-qwen3.8-27b-fp8-h100-{kind}-c{c}", "0.28.0", "Qwen/Qwen3.8-27B-FP8", QWEN38_27B, "fp8", "h100", 1,
            {"input_len": isl, "output_len": osl, "concurrency": c, "request_rate": None, "offline": False,
             "num_prompts": None, "fixed_lengths": True},
            {"output_throughput_tok_s": tput, "ttft_ms": ttft, "ttft_stat": "median" if ttft else None,
             "tpot_ms": tpot, "tpot_stat": "median" if tpot else None}, source, max_num_seqs=512)
      for kind, isl, osl, c, tput, ttft, tpot, source in (
          ("latency", 1193, 256, 1, 76.928, 285.632, 11.928, ATLAS),
          ("latency", 1193, 256, 16, 790.507, 1324.001, 15.056, ATLAS),
          ("agent", 4593, 512, 1, 78.451, None, None, ATLAS_AGENT),
          ("agent", 4593, 512, 16, 638.758, None, None, ATLAS_AGENT))),
)


def main() -> int:
    text = "".join(json.dumps(p) + "\n" for p in POINTS)
    write_bytes_atomic(OUT, text.encode())
    print(f"wrote {len(POINTS)} lines to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
