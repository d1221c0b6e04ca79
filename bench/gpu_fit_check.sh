#!/usr/bin/env bash
# gpu_fit_check.sh: servekit's predicted KV pool against what vLLM logs, on a real NVIDIA GPU.
#
# STATUS: written and kept ready; NOT RUN YET. The one GPU machine lent so far (an H200, 2026-12-04)
# had no vLLM and no package registry: vLLM's wheels are 227-320 MB and 0.34.0 pins torch 2.13.0,
# against 64 MiB a call may carry and torch 2.11.0 on that machine. bench/gpu_probe.py ran there
# instead (the memory torch reports, kernel rates; bench/results/README.md).
#
# What it does, on a machine with an NVIDIA GPU and the vLLM GPU build installable (or
# installed, VLLM_PYTHON pointing at its python):
#   1. makes small models locally with random weights (no download): dense GQA (Llama),
#      sliding window (Mistral with sliding_window; Gemma-2 with interleaved sliding and full layers),
#      MoE (Mixtral) and MLA
#      (DeepSeek-V2) configs, saved with safetensors so servekit reads exact weight bytes;
#   2. starts each with `vllm serve` at several settings (max-model-len, gpu-memory-utilization,
#      max-num-seqs, enforce-eager), waits for "GPU KV cache size" in the log, stops it;
#   3. writes one kv-points line per launch (structured fields only, with the logged figures:
#      available_kv_gib_per_gpu, weights_gib_per_rank, measured_kv_tokens) to
#      bench/results/gpu-points-<gpu>-<vllm>.jsonl and the start-up logs beside it;
#   4. scores them with bench/bench_kv_points.py (logged and whole-model scores).
#
# Usage: bash bench/gpu_fit_check.sh [--quick]      (--quick: one setting per architecture)
# Env:   VLLM_PYTHON   python of an environment with vLLM (default: make bench/.gpu-venv, pip install
#                      "$VLLM_PIP_SPEC")
#        VLLM_PIP_SPEC what to install (default: vllm); e.g. vllm==0.8.5 to check an older release's rules
#        VLLM_ENV      space-separated NAME=VALUE pairs set for every launch and recorded in each point's
#                      env, e.g. "VLLM_USE_V1=0" (the V0 engine of 0.8-0.10)
#        SERVEKIT_PYTHON python of servekit's environment for the scoring step (default: .venv/bin/python
#                      of this checkout; gpu_fit_point.py needs only the standard library and src/)
#        PORT          first port to use (default 8765); TIMEOUT_S per launch (default 600)
#
# Rules this settles when run with several releases (one GPU is enough for all of them):
#   VLLM_PIP_SPEC=vllm==0.7.3                         V0 scheduler defaults and V0 sampler (40 B/logit)
#   VLLM_PIP_SPEC=vllm==0.10.1.1 VLLM_ENV=VLLM_USE_V1=0   the same V0 rules at the last V0 release
#   VLLM_PIP_SPEC=vllm==0.8.5                         V1 before 0.9.2: non-torch memory (CUDA context
#                                                     counted?), sliding layers pooled as full
#   VLLM_PIP_SPEC=vllm==0.10.1.1                      FlashInfer sampler (8 B/logit), hybrid allocator
#   VLLM_PIP_SPEC=vllm==0.10.1.1 VLLM_ENV=VLLM_USE_FLASHINFER_SAMPLER=0   the native sampler (32 B/logit)
#   default (newest)                                  fused-MoE activation term, sorted sampler
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$REPO/bench/results"
WORK="${WORK:-$(mktemp -d)}"
PORT="${PORT:-8765}"
TIMEOUT_S="${TIMEOUT_S:-600}"
QUICK="${1:-}"

command -v nvidia-smi >/dev/null || { echo "error: no nvidia-smi; this check needs an NVIDIA GPU" >&2; exit 2; }
if [[ -z "${VLLM_PYTHON:-}" ]]; then
  python3 -m venv "$REPO/bench/.gpu-venv"
  "$REPO/bench/.gpu-venv/bin/pip" install -q "${VLLM_PIP_SPEC:-vllm}"
  VLLM_PYTHON="$REPO/bench/.gpu-venv/bin/python"
fi
VLLM_VERSION="$("$VLLM_PYTHON" -c 'import vllm; print(vllm.__version__)')"
GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
GPU_SLUG="$(echo "$GPU_NAME" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')"
ENV_SLUG="$(echo "${VLLM_ENV:-}" | tr -cd 'A-Za-z0-9=_' | tr 'A-Z=' 'a-z-')"
POINTS="$OUT/gpu-points-$GPU_SLUG-$VLLM_VERSION${ENV_SLUG:+-$ENV_SLUG}.jsonl"
mkdir -p "$OUT/logs"
: > "$POINTS"
echo "vLLM $VLLM_VERSION on $GPU_NAME; models in $WORK; points -> $POINTS"

# 1. small random-weight models (config.json + model.safetensors + a tokenizer copy)
"$VLLM_PYTHON" - "$WORK" <<'PY'
import json, sys, torch
from pathlib import Path
from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast
from tokenizers import Tokenizer, models, pre_tokenizers

work = Path(sys.argv[1])
common = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
              num_key_value_heads=4, vocab_size=32000, max_position_embeddings=32768, torch_dtype="bfloat16")
configs = {
    "dense-gqa": dict(model_type="llama", architectures=["LlamaForCausalLM"], **common),
    "sliding-window": dict(model_type="mistral", architectures=["MistralForCausalLM"], sliding_window=1024, **common),
    "sliding-interleaved": dict(model_type="gemma2", architectures=["Gemma2ForCausalLM"], sliding_window=1024,
                                head_dim=64, **{k: v for k, v in common.items() if k != "max_position_embeddings"},
                                max_position_embeddings=16384),
    "moe": dict(model_type="mixtral", architectures=["MixtralForCausalLM"], num_local_experts=8,
                num_experts_per_tok=2, **common),
    "mla": dict(model_type="deepseek_v2", architectures=["DeepseekV2ForCausalLM"], kv_lora_rank=256,
                q_lora_rank=None, qk_rope_head_dim=64, qk_nope_head_dim=64, v_head_dim=64, n_routed_experts=8,
                num_experts_per_tok=2, moe_intermediate_size=704, n_shared_experts=1, first_k_dense_replace=1,
                **{k: v for k, v in common.items() if k != "num_key_value_heads"}, num_key_value_heads=16),
}
vocab = {f"t{i}": i for i in range(32000)}
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="t0"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
for name, cfg in configs.items():
    path = work / name
    config = AutoConfig.for_model(**cfg)
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16, trust_remote_code=True)
    model.save_pretrained(path, safe_serialization=True)
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0", eos_token="t1", bos_token="t2").save_pretrained(path)
    print("made", path)
PY

# 2. launches: name, extra args
SETTINGS=(
  "--max-model-len 4096 --gpu-memory-utilization 0.5"
  "--max-model-len 16384 --gpu-memory-utilization 0.8 --max-num-seqs 64"
  "--max-model-len 8192 --gpu-memory-utilization 0.9 --enforce-eager"
)
[[ "$QUICK" == "--quick" ]] && SETTINGS=("${SETTINGS[0]}")

launch() {  # model_dir setting_index args...
  local model="$1" idx="$2" log; shift 2
  log="$OUT/logs/$(basename "$model")-$idx.log"
  # shellcheck disable=SC2086
  env ${VLLM_ENV:-} timeout "$TIMEOUT_S" "$VLLM_PYTHON" -m vllm.entrypoints.openai.api_server --model "$model" --port "$PORT" \
      --dtype bfloat16 "$@" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 "$TIMEOUT_S"); do
    grep -qE "GPU KV cache size|# (GPU|CUDA) blocks:" "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # shellcheck disable=SC2086
  env ${VLLM_ENV:-} "$VLLM_PYTHON" "$REPO/bench/gpu_fit_point.py" --log "$log" --model "$model" --gpu "$GPU_NAME" \
      --vllm "$VLLM_VERSION" -- "$@" >> "$POINTS" || echo "no point from $log" >&2
}

for dir in "$WORK"/*/; do
  for i in "${!SETTINGS[@]}"; do
    # shellcheck disable=SC2086
    launch "${dir%/}" "$i" ${SETTINGS[$i]}
  done
done

# 4. predicted against logged
echo
# scored with servekit's own environment (the points table is YAML read by ruamel.yaml, which
# vLLM's environment does not carry); vLLM's python only when no servekit environment is found
SCORE_PYTHON="${SERVEKIT_PYTHON:-}"
[[ -z "$SCORE_PYTHON" && -x "$REPO/.venv/bin/python" ]] && SCORE_PYTHON="$REPO/.venv/bin/python"
SCORE_PYTHON="${SCORE_PYTHON:-$VLLM_PYTHON}"
PYTHONPATH="$REPO/src" "$SCORE_PYTHON" "$REPO/bench/bench_kv_points.py" --all -v "$POINTS" | tee "$OUT/gpu-score-$GPU_SLUG-$VLLM_VERSION${ENV_SLUG:+-$ENV_SLUG}.txt"
