"""Predict measured KV pools: one line of the kv-points schema -> the planner's figures.

A kv-points line describes a real launch and what its start-up log said: ``config_facts`` (a
subset of config.json keys, plus ``mla`` / layer counts), ``gpu_mem_gib``, ``tp``,
``gpu_memory_utilization``, ``max_model_len``, ``kv_cache_dtype`` (free text whose first word is
the value), ``extra_flags`` (flag strings), ``weights_gib`` (checkpoint size; the notes may state
the per-GPU figure) and, when logged, ``available_kv_gib_per_gpu``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from typing import Any

from servekit.errors import ServekitError
from servekit.facts.config import layer_kinds
from servekit.facts.linear import gated_deltanet, linear_from_config
from servekit.facts.model import LayerKind, MLAFacts, ModelFacts
from servekit.fit.hardware import custom_device
from servekit.fit.launch import LaunchSettings, parse_vllm_argv
from servekit.fit.planner import FitRequest, plan_fit

ASSUMED_KV_HEADS = 8
ASSUMED_HEAD_DIM = 128
_PER_RANK = re.compile(
    r"(?:weights\s*/\s*GPU\s*([\d.]+)\s*GiB)|(?:weights\s+([\d.]+)\s*GiB\s*/\s*GPU)|"
    r"(?:([\d.]+)\s*GiB\s*(?:/\s*rank|per rank)(?!\s*\(TP[2-9]))"
)


class PointError(ServekitError):
    """A kv-points line lacks what a prediction needs."""


def _every(n: int, special: int) -> int:
    return max(1, round(n / max(1, special)))


def _layers(cf: dict[str, Any]) -> list[LayerKind]:
    """Layer kinds from a point's facts: config keys first, then the layer counts points give."""
    n = int(cf["num_hidden_layers"])
    if cf.get("mla") or cf.get("kv_lora_rank"):
        return ["mla"] * n
    if cf.get("layer_types") or cf.get("full_attention_interval") or cf.get("sliding_window_pattern"):
        return layer_kinds(cf, n, "config_facts")
    if cf.get("linear_attention_layers"):
        every = _every(n, n - int(cf["linear_attention_layers"]))
        return ["full" if (i + 1) % every == 0 else "linear" for i in range(n)]
    if cf.get("sliding_layers") or cf.get("global_layers"):
        sliding = int(cf.get("sliding_layers") or n - int(cf["global_layers"]))
        every = _every(n, n - sliding)
        return ["full" if (i + 1) % every == 0 else "sliding" for i in range(n)]
    if cf.get("sliding_window") and cf.get("use_sliding_window", True) and "global" not in str(cf.get("attention", "")):
        return ["sliding"] * n
    return ["full"] * n


def facts_from_point(cf: dict[str, Any]) -> tuple[ModelFacts, list[str]]:
    """Model facts from a point's ``config_facts``; the second value lists assumptions made."""
    assumed: list[str] = []
    kv_heads = cf.get("num_key_value_heads")
    head_dim = cf.get("head_dim")
    if (kv_heads is None or head_dim is None) and not cf.get("mla"):
        assumed.append(f"num_key_value_heads={ASSUMED_KV_HEADS}, head_dim={ASSUMED_HEAD_DIM}")
    kv_heads, head_dim = kv_heads or ASSUMED_KV_HEADS, head_dim or ASSUMED_HEAD_DIM
    heads = cf.get("num_attention_heads") or kv_heads
    if cf.get("linear_num_value_heads"):
        linear = gated_deltanet(
            cf["linear_num_key_heads"], cf["linear_num_value_heads"], cf["linear_key_head_dim"],
            cf["linear_value_head_dim"], cf.get("linear_conv_kernel_dim", 4), cf.get("mamba_ssm_dtype", "float32"),
        )
    else:
        linear = linear_from_config(cf, int(heads), int(head_dim))
    mla = MLAFacts(kv_lora_rank=cf["kv_lora_rank"], qk_rope_head_dim=cf["qk_rope_head_dim"]) if cf.get("mla") else None
    facts = ModelFacts(
        source="kv-points config_facts",
        hidden_size=cf.get("hidden_size"),
        num_attention_heads=int(heads),
        num_kv_heads=int(kv_heads),
        head_dim=int(head_dim),
        layers=tuple(_layers(cf)),
        sliding_window=cf.get("sliding_window"),
        linear=linear,
        mla=mla,
        mtp_layers=int(cf.get("mtp_num_hidden_layers") or 0),
    )
    return facts, assumed


def _flag_argv(flags: list[str]) -> list[str]:
    argv: list[str] = []
    for flag in flags:
        text = re.sub(r"\(.*?\)", "", flag).strip()
        if text.startswith("--speculative-config") and not text.rstrip().endswith("}"):
            words = text.split()
            method = words[1] if len(words) > 1 else "unknown"
            count = next((int(w[2:]) for w in words if re.fullmatch(r"n=\d+", w)), 1)
            argv += ["--speculative-config", f'{{"method": "{method}", "num_speculative_tokens": {count}}}']
            continue
        try:
            argv += shlex.split(text)
        except ValueError:
            argv += text.split()
    return argv


def launch_from_point(point: dict[str, Any]) -> LaunchSettings:
    launch = parse_vllm_argv(_flag_argv(list(point.get("extra_flags") or [])))
    kv = str(point.get("kv_cache_dtype") or "auto").split()[0].strip("(),;")
    return replace(
        launch,
        tp=int(point.get("tp") or launch.tp or 1),
        pp=int(point.get("pp") or launch.pp or 1),
        block_size=point.get("block_size") or launch.block_size,
        max_model_len=point.get("max_model_len") or launch.max_model_len,
        kv_cache_dtype=kv,
        gpu_memory_utilization=point.get("gpu_memory_utilization") or launch.gpu_memory_utilization,
        enforce_eager=bool(point.get("enforce_eager")) or launch.enforce_eager,
    )


def weights_per_rank_from_point(point: dict[str, Any]) -> float | None:
    match = _PER_RANK.search(str(point.get("notes") or ""))
    if match:
        return float(next(g for g in match.groups() if g))
    total = point.get("weights_gib")
    return float(total) / int(point.get("tp") or 1) if total else None


def predict_point(point: dict[str, Any]) -> dict[str, Any]:
    """``{kv_tokens, kv_bytes_per_token, weights_gib_per_rank}`` for one kv-points line."""
    if "config_facts" not in point:
        raise PointError("kv-points line has no config_facts")
    if not isinstance(point["config_facts"], dict):
        raise PointError("config_facts must be a JSON object of config.json keys")
    facts, assumed = facts_from_point(point["config_facts"])
    launch = launch_from_point(point)
    weights = weights_per_rank_from_point(point)
    available = point.get("available_kv_gib_per_gpu")
    memory = point.get("gpu_mem_gib")
    out: dict[str, Any] = {"kv_tokens": None, "kv_bytes_per_token": None, "weights_gib_per_rank": weights}
    if memory is None and available is None:
        memory = 0.0
    report = plan_fit(FitRequest(
        facts=facts, device=custom_device(float(memory or 0.0), launch.tp), launch=launch,
        available_kv_gib=available, weights_gib_per_rank=weights if weights is not None else 0.0,
        engine_version=point.get("vllm_version"),
    ))
    out["kv_bytes_per_token"] = report.kv_bytes_per_token
    if available is not None or (memory and weights is not None):
        out["kv_tokens"] = report.kv_tokens
    if assumed:
        out["assumed"] = assumed
    return out
