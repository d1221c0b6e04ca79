"""One kv-points line from a vLLM start-up log and the launch that wrote it (bench/gpu_fit_check.sh).

Usage: python bench/gpu_fit_point.py --log LOG --model DIR --gpu NAME --vllm VERSION -- ARGS...

Reads the figures vLLM logs (``Model loading took X GiB``, ``Available KV cache memory: X GiB``,
``GPU KV cache size: N tokens``; the V0 engine's ``Loading model weights took``, ``the rest of the
memory reserved for KV Cache is`` and ``# GPU blocks: N``) and the model's config.json; prints one JSON line, or exits 1
when the log has no pool (the launch failed).

The line is written in the structured schema the points reader takes (``servekit.fit.point_fields``):
``gpu_model`` is the device table's id for the GPU name (``servekit.hardware.device_memory``; left
out when no row names the part, the measured ``gpu_mem_gib`` then stands alone), ``tp``/``pp`` come
from the launch's flags, each ``extra_flags`` entry is one flag with its value quoted as a shell
would pass it (a ``--speculative-config`` JSON value stays one word), ``quantization`` is the
checkpoint's ``quantization_config`` in the points' ``{"method", "bits"}`` form and
``config_facts.multimodal`` says whether the checkpoint holds a vision tower. The GPU name itself is
free text and goes only into ``notes``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from servekit.facts.quant_bytes import format_from_config  # noqa: E402
from servekit.hardware.device_memory import measured_memory  # noqa: E402

CONFIG_KEYS = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
               "intermediate_size", "vocab_size", "sliding_window", "kv_lora_rank", "qk_rope_head_dim",
               "q_lora_rank", "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
               "moe_intermediate_size", "first_k_dense_replace", "torch_dtype", "layer_types",
               "sliding_window_pattern")
V0_BLOCK_SIZE = 16
PLACED = ("--gpu-memory-utilization", "--max-model-len", "--tensor-parallel-size", "-tp",
          "--pipeline-parallel-size", "-pp", "--kv-cache-dtype", "--enforce-eager")
"""Flags the line states in fields of their own, not in ``extra_flags``."""
ENV_KEYS = ("VLLM_USE_V1", "VLLM_USE_FLASHINFER_SAMPLER", "VLLM_ATTENTION_BACKEND")
"""Environment variables that select the accounting a launch ran under (kept in the point's ``env``)."""


def _figure(pattern: str, text: str) -> float | None:
    found = re.findall(pattern, text)
    return float(found[-1].replace(",", "")) if found else None


def _gpu_memory_gib() -> float:
    """Total memory of GPU 0 as the engine sees it (``torch.cuda.mem_get_info``), which is less than
    nvidia-smi's ``memory.total`` (an H100 80GB: 79.19 GiB against 81,559 MiB)."""
    try:
        import torch

        return round(torch.cuda.mem_get_info(0)[1] / (1 << 30), 2)
    except Exception:  # no torch here: nvidia-smi's figure, which overstates the total a little
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, check=True).stdout
        return round(float(out.splitlines()[0]) / 1024, 2)


def value_of(args: list[str], flag: str, default: object) -> object:
    """The value after ``flag`` in an argv, else ``default``."""
    args = [a for a in args if a != "--"]
    return args[args.index(flag) + 1] if flag in args[:-1] else default


def flag_values(args: list[str]) -> dict[str, str]:
    """``{flag: value}`` of an argv's flags that take a value (the next word is not a flag)."""
    return {a: args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("-") and not args[i + 1].startswith("--")}


def extra_flags(args: list[str]) -> list[str]:
    """One entry per flag of the argv (with its value, shell-quoted), less the ones with fields."""
    values = flag_values(args)
    return [shlex.join([a, values[a]]) if a in values else a for a in args
            if a.startswith("-") and a not in PLACED]


def quantization(config: dict[str, Any]) -> dict[str, Any] | None:
    """The checkpoint's ``quantization_config`` as the points' ``{"method", "bits"}`` (with an FP8
    checkpoint's ``weight_block_size``, an int format's ``group_size``), read by the one reader of
    quantization configs (``servekit.facts.quant_bytes.format_from_config``); None when it has none
    or names no format the points take."""
    q = config.get("quantization_config") or (config.get("text_config") or {}).get("quantization_config")
    fmt = format_from_config(q) if isinstance(q, dict) else None
    if fmt is None:
        return None
    out: dict[str, Any] = {"method": fmt.method, "bits": fmt.bits}
    if fmt.weight_block_size:
        out["weight_block_size"] = list(fmt.weight_block_size)
    if fmt.group_size and fmt.method.startswith("int"):
        out["group_size"] = fmt.group_size
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--log", "--model", "--gpu", "--vllm"):
        parser.add_argument(name, required=True)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    args = [a for a in opts.args if a != "--"]
    text = Path(opts.log).read_text(errors="replace")
    tokens = _figure(r"GPU KV cache size: ([\d,]+) tokens", text)
    if tokens is None:  # the V0 engine logs blocks
        blocks = _figure(r"# (?:GPU|CUDA) blocks: ([\d,]+)", text)
        if blocks is None:
            return 1
        tokens = blocks * int(value_of(opts.args, "--block-size", V0_BLOCK_SIZE))
    config = json.loads((Path(opts.model) / "config.json").read_text())
    facts: dict[str, Any] = {k: config[k] for k in CONFIG_KEYS if config.get(k) is not None}
    if config.get("kv_lora_rank"):
        facts["mla"] = True
    facts["multimodal"] = bool(config.get("vision_config"))
    value = flag_values(args)
    row = measured_memory(opts.gpu)
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    point = {
        "model": Path(opts.model).name, "arch_type": Path(opts.model).name, "config_facts": facts,
        **({"gpu_model": row.id} if row else {}),
        "tp": int(value.get("--tensor-parallel-size", value.get("-tp", 1))),
        "pp": int(value.get("--pipeline-parallel-size", value.get("-pp", 1))),
        "gpu_mem_gib": _figure(r"total_gpu_memory \(?([\d.]+) ?GiB", text) or _gpu_memory_gib(),
        "gpu_memory_utilization": float(value.get("--gpu-memory-utilization", 0.9)),
        "max_model_len": int(value.get("--max-model-len", config.get("max_position_embeddings", 4096))),
        "kv_cache_dtype": value.get("--kv-cache-dtype", "auto"), "enforce_eager": "--enforce-eager" in args,
        "vllm_version": opts.vllm, "weights_gib": None,
        "weights_gib_per_rank": _figure(r"(?:Model loading took|Loading model weights took) ([\d.]+) G", text),
        "measured_kv_tokens": int(tokens), "measured_concurrency": None,
        "available_kv_gib_per_gpu": _figure(
            r"(?:Available KV cache memory:|the rest of the memory reserved for KV Cache is) ([\d.]+) ?GiB", text),
        "extra_flags": extra_flags(args),
        **({"quantization": quantization(config)} if quantization(config) else {}),
        **({"engine": "v0" if env["VLLM_USE_V1"] == "0" else "v1"} if env.get("VLLM_USE_V1") in ("0", "1") else {}),
        "env": env,
        "source": f"bench/gpu_fit_check.sh ({Path(opts.log).name})", "confidence": "high",
        "notes": f"GPU: {opts.gpu}" + ("" if row else " (no row of the device table; gpu_mem_gib as measured)"),
    }
    print(json.dumps(point))
    return 0


if __name__ == "__main__":
    sys.exit(main())
