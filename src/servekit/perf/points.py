"""Lines of the perf-points schema (``perf-points-visible.jsonl``) -> predictions.

Only structured fields are read: ``config_facts`` (config.json keys plus ``params_total_b``,
``params_active_b``, ``full_attention_layers``, ``linear_attention_layers``), ``engine``,
``engine_version``, ``weights_precision``, ``kv_cache_dtype``, ``gpu`` (a hardware taxonomy id,
else a part of the device speed table: ``point_profile``),
``gpu_count``, ``tp``, ``pp``, ``dp``, ``max_num_seqs``, ``max_num_batched_tokens``,
``async_scheduling`` (vLLM's switch where the launch states it), ``scheduler_recv_interval`` and
``num_continuous_decode_steps`` (SGLang's, where the launch states them),
``spec_decoding`` (``{"method", "num_speculative_tokens"}`` and optionally
``"acceptance_rate"``) and ``workload`` (its optional ``fixed_lengths``: every request has exactly
its lengths, a random dataset with no spread run with ``--ignore-eos``; absent, they are a
dataset's means). ``measured``, ``notes``, ``source``, ``confidence``
and the like are never read.

The KV pool comes from the memory model of ``servekit.fit`` (``fit.points.predict_point``: the
vLLM accounting at its default utilization; SGLang's own rule for SGLang; for TensorRT-LLM, its free
fraction of what that accounting leaves free of the whole device, ``free_fraction_pool``) with the checkpoint size from
the parameters and format, on the taxonomy profile's device memory, and the KV dtype the launch
runs (``launch_kv_dtype``: TensorRT-LLM follows an FP8 or NVFP4 checkpoint's FP8 KV cache when the
line states none). DP replicas count only when ``tp x pp x dp`` equals ``gpu_count``; else a DP that divides TP is
data-parallel attention inside the TP group (SGLang's ``--enable-dp-attention``:
``Layout.attention_dp``, each rank holding the KV cache of its share of the sequences).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from servekit.facts.moe_config import interleaved_dense_layers
from servekit.facts.quant_bytes import FORMATS
from servekit.fit.points import predict_point
from servekit.fit.sharding import GIB
from servekit.fit.versions import VersionTextError, read_version
from servekit.fit.dtypes import KV_CACHE_DTYPES
from servekit.fit.gpu_models import gpu_part
from servekit.hardware.device_compute import compute_row, row_brand
from servekit.hardware.device_memory import memory_row, part_memory
from servekit.hardware.profile import HardwareProfile, custom_profile
from servekit.engines.sglang.scheduler import steps_between_reads
from servekit.perf.constants import ENGINES, acceptance
from servekit.perf.launch import (
    PerfError, default_limits, engine_key, offline_occupancy, overlaps_host_work, rates_for, reserves_whole_output,
)
from servekit.perf.predict import Limits, PerfLaunch, Prediction, Spec, Workload
from servekit.perf.shape import (
    FORMAT_BYTES, ModelShape, expert_params, mla_widths, untied_embedding_params, weights_format_of,
)
from servekit.perf.terms import Layout

REQUIRED = ("config_facts", "engine", "weights_precision", "gpu", "workload")
MIN_MODEL_LEN = 4096
ENGINE_SPELLINGS = {"tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm", "tensorrtllm": "trtllm", "trt-llm": "trtllm",
                    "trt_llm": "trtllm"}
"""Other spellings of the engines the speed model has constants for (``servekit.perf.constants.ENGINES``)."""


def point_engine(text: Any) -> str:
    """A line's ``engine`` as the speed model names it: case and TensorRT-LLM's spellings folded, a
    vLLM fork or plugin (``vllm-ascend``) as vLLM; an engine the model has no constants for is an
    error, not a vLLM launch."""
    key = str(text).strip().lower().replace(" ", "-")
    key = ENGINE_SPELLINGS.get(key, key)
    if key.startswith("vllm"):
        return "vllm"
    if key not in ENGINES:
        raise PerfError(f"engine: {text!r} has no speed constants",
                        fix=f"write one of {', '.join(ENGINES)} (the engines the calibration runs measured)")
    return key


def normal_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """The line with its ``engine`` spelled as the speed model names it (``point_engine``)."""
    if point.get("engine") is None:
        return dict(point)
    return {**point, "engine": point_engine(point["engine"])}


def _switch(point: Mapping[str, Any], key: str) -> bool | None:
    """A launch switch the line states (true or false), else None (the engine's default)."""
    value = point.get(key)
    if value is not None and not isinstance(value, bool):
        raise PerfError(f"{key}: {value!r} is not true, false or null",
                        fix=f"write true or false where the launch passes the {key} switch, else leave it out")
    return value


def _int(point: Mapping[str, Any], key: str, default: int = 1) -> int:
    value = point.get(key)
    if value is None:
        return default
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 1:
        raise PerfError(f"{key}: {value!r} is not a positive whole number")
    return int(value)


def _fact(cf: Mapping[str, Any], key: str) -> float:
    value = cf.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise PerfError(f"config_facts.{key}: {value!r} is not a positive number",
                        fix=f"state config_facts.{key}")
    return float(value)


def shape_facts(point: Mapping[str, Any]) -> ModelShape:
    """The model's shape from ``config_facts`` (KV bytes per token filled in later)."""
    cf = point["config_facts"]
    layers, hidden = int(_fact(cf, "num_hidden_layers")), int(_fact(cf, "hidden_size"))
    heads = int(_fact(cf, "num_attention_heads"))
    head_dim = int(cf.get("head_dim") or hidden // heads)
    width, decode_width = 2 * head_dim, 0
    if cf.get("kv_lora_rank"):
        width, decode_width = mla_widths(int(cf["kv_lora_rank"]), int(cf.get("qk_nope_head_dim") or 0),
                                         int(cf.get("qk_rope_head_dim") or 0), int(cf.get("v_head_dim") or head_dim))
    experts = int(cf.get("num_experts") or cf.get("n_routed_experts") or cf.get("num_local_experts") or 0)
    per_token = int(cf.get("num_experts_per_tok") or 0)
    inner = int(cf.get("moe_intermediate_size") or cf.get("intermediate_size") or 0)
    first_dense = int(cf.get("first_k_dense_replace") or 0)
    moe_layers = len(set(range(first_dense, layers)) - set(interleaved_dense_layers(cf)))
    routed = expert_params(moe_layers, hidden, experts, inner) if experts else 0.0
    fmt = weights_format_of(str(point["weights_precision"]))
    if fmt is None:
        raise PerfError(f"weights_precision: {point['weights_precision']!r} names no number format",
                        fix=f"use one of {', '.join(FORMAT_BYTES)}")
    total = _fact(cf, "params_total_b") * 1e9
    active = _fact(cf, "params_active_b") * 1e9 if cf.get("params_active_b") is not None or experts else total
    return ModelShape(params_total=total, params_active=active,
                      expert_params=min(routed, total), experts=experts, experts_per_token=per_token,
                      layers=layers, hidden=hidden, heads=heads, attention_dim=width, kv_bytes_per_token=0.0,
                      weights_format=fmt, decode_attention_dim=decode_width,
                      vocab=int(cf.get("vocab_size") or 0),
                      embedding_params=untied_embedding_params(int(cf.get("vocab_size") or 0), hidden,
                                                               cf.get("tie_word_embeddings") is not False))


def _attention_layers(cf: Mapping[str, Any]) -> dict[str, int] | None:
    layers = int(cf["num_hidden_layers"])
    full = cf.get("full_attention_layers")
    linear = cf.get("linear_attention_layers") or 0
    if not isinstance(full, int) or full >= layers:
        return None
    other = "linear" if linear else "sliding"
    return {"full": full, other: layers - full}


def kv_pool(point: Mapping[str, Any], shape: ModelShape, profile: HardwareProfile, tp: int, pp: int) -> dict:
    """The fit memory model's ``{kv_tokens, kv_bytes_per_token}`` for this launch."""
    cf = {k: v for k, v in point["config_facts"].items() if v is not None}
    cf["mla"] = bool(cf.get("kv_lora_rank"))
    layers = _attention_layers(cf)
    if layers:
        cf["attention_layers"] = layers
    wl = point["workload"]
    line: dict[str, Any] = {
        "config_facts": cf, "tp": tp, "pp": pp, "kv_cache_dtype": launch_kv_dtype(point),
        "weights_gib": shape.weight_bytes / GIB, "gpu_mem_gib": profile.memory_gib,
        "max_model_len": max(MIN_MODEL_LEN, int(wl["input_len"]) + int(wl["output_len"])),
    }
    if shape.weights_format in FORMATS:  # what the load adds to a quantized checkpoint (servekit.fit.memory)
        line["quantization"] = {"method": shape.weights_format, "bits": FORMATS[shape.weights_format]}
    row = profile.compute
    if row is not None and row.memory_id and memory_row(row.memory_id):
        line["gpu_model"] = row.memory_id
    version = vllm_release(point)
    if version:
        line["vllm_version"] = version
    engine = engine_key(str(point.get("engine")))
    if engine == "sglang":  # SGLang's own memory rule, by its release
        return predict_point({**line, "engine_version": point.get("engine_version")}, engine="sglang")
    if engine == "trtllm":  # what is free of the whole device, then its share
        return free_fraction_pool(predict_point({**line, "gpu_memory_utilization": 1.0}))
    return predict_point(line)


TRTLLM_FREE_FRACTION = 0.9
"""TensorRT-LLM sizes its KV cache as this share of the memory still free once the model is loaded
(``KvCacheConfig.free_gpu_memory_fraction``, default 0.9: tensorrt_llm/llmapi/llm_args.py), where
vLLM budgets ``--gpu-memory-utilization`` of the whole device and takes what it uses out of it."""


def free_fraction_pool(pool: dict) -> dict:
    """A pool planned with the whole device (what vLLM's accounting leaves free once the model and
    its activations are in), resized as TensorRT-LLM sizes it: ``TRTLLM_FREE_FRACTION`` of it."""
    available = pool.get("available_kv_gib")
    if not pool.get("kv_tokens") or not available:
        return pool
    kv = TRTLLM_FREE_FRACTION * available
    return {**pool, "kv_tokens": int(pool["kv_tokens"] * TRTLLM_FREE_FRACTION), "available_kv_gib": round(kv, 4)}


def kv_dtype(value: Any) -> str:
    """A line's KV cache dtype as vLLM spells it: its own choice, FP8 for any FP8 spelling, else auto
    (the weights' dtype)."""
    text = str(value or "auto").strip().lower()
    if text in KV_CACHE_DTYPES:
        return text
    return "fp8" if "fp8" in text else "auto"


CHECKPOINT_KV_FP8_ENGINES = ("trtllm",)
"""Engines whose unset KV dtype follows the checkpoint's own KV quantization: TensorRT-LLM's
``KvCacheConfig.dtype`` defaults to ``"auto"``, which takes ``kv_cache_quant_algo`` from the
checkpoint's ``hf_quant_config.json`` (tensorrt_llm/llmapi/llm_args.py, llm_utils.py)."""

CHECKPOINT_KV_FP8_FORMATS = ("fp8", "nvfp4")
"""Checkpoint formats taken to carry an FP8 KV cache: the FP8 and NVFP4 checkpoints TensorRT-LLM
runs are NVIDIA ModelOpt exports, whose PTQ script quantizes the KV cache to FP8 unless told
otherwise (TensorRT-Model-Optimizer examples/llm_ptq/hf_ptq.py: ``--kv_cache_qformat`` defaults to
``fp8``). An assumption for any one checkpoint: a point that states its KV dtype keeps it."""


def launch_kv_dtype(point: Mapping[str, Any]) -> str:
    """The KV dtype a line's launch runs: its own (``kv_dtype``), else FP8 where the engine follows
    the checkpoint and the checkpoint's format is one ModelOpt exports with an FP8 KV cache, else
    auto."""
    own = kv_dtype(point.get("kv_cache_dtype"))
    stated = str(point.get("kv_cache_dtype") or "auto").strip().lower() != "auto"
    if stated or str(point.get("engine")) not in CHECKPOINT_KV_FP8_ENGINES:
        return own
    return "fp8" if weights_format_of(str(point.get("weights_precision"))) in CHECKPOINT_KV_FP8_FORMATS else own


def vllm_release(point: Mapping[str, Any]) -> str | None:
    """The vLLM release of a vLLM line when its text reads as one (else the newest rules apply)."""
    if point.get("engine") != "vllm" or not point.get("engine_version"):
        return None
    text = str(point["engine_version"]).strip().lstrip("vV")
    try:
        read_version(text)
    except VersionTextError:
        return None
    return text


def workload_of(point: Mapping[str, Any]) -> Workload:
    wl = point["workload"]
    if not isinstance(wl, Mapping):
        raise PerfError("workload must be an object with input_len and output_len")
    rate = wl.get("request_rate")
    fixed = wl.get("fixed_lengths", False)
    if not isinstance(fixed, bool):
        raise PerfError(f"workload.fixed_lengths must be true or false, not {fixed!r}",
                        fix="write true where every request has exactly input_len and output_len tokens")
    return Workload(input_len=_int(wl, "input_len"), output_len=_int(wl, "output_len"),
                    concurrency=wl.get("concurrency") and _int(wl, "concurrency"),
                    request_rate=float(rate) if rate else None, num_prompts=_int(wl, "num_prompts", 1000),
                    fixed_lengths=fixed)


def spec_of(point: Mapping[str, Any]) -> Spec | None:
    spec = point.get("spec_decoding")
    if not isinstance(spec, Mapping) or not spec.get("method"):
        return None
    method = str(spec["method"])
    rate = spec.get("acceptance_rate")
    return Spec(method, _int(spec, "num_speculative_tokens"), float(rate) if rate else acceptance(method))


def point_profile(gpu: str, profiles: Mapping[str, HardwareProfile]) -> HardwareProfile:
    """The device of a line's ``gpu``: a hardware taxonomy id, else a part of the device speed
    table (``servekit.hardware.device_compute``, its id or an alias), with the memory the device
    memory table gives it (none: the KV pool is not a limit) and its generation."""
    if gpu in profiles:
        return profiles[gpu]
    row = compute_row(gpu)
    if row is None:
        raise PerfError(f"gpu: {gpu!r} is neither a hardware id nor a part of the device speed table",
                        fix="use an id of `servekit list hardware` or of servekit.hardware.device_compute")
    part = gpu_part(row.memory_id) if row.memory_id else None
    brand = part.brand if part else row_brand(row)
    gib, basis = part_memory(row.memory_id, row.id, brand == "AMD")
    profile = custom_profile(gib or 1.0, 1, brand=brand, generation=part.generation if part else row.generation,
                             hw_id=row.id)
    return replace(profile, compute=row, memory_gib=gib, memory_source=basis)


def launch_of(point: Mapping[str, Any], profiles: Mapping[str, HardwareProfile],
              values: Mapping[str, float] | None = None, pool: dict | None = None) -> PerfLaunch:
    """The launch a line describes; ``pool`` a ``kv_pool`` result already computed (it does not
    depend on the fitted constants)."""
    missing = [k for k in REQUIRED if point.get(k) is None]
    if missing:
        raise PerfError(f"perf point lacks {', '.join(missing)}")
    profile = point_profile(str(point["gpu"]), profiles)
    tp, pp, dp = _int(point, "tp"), _int(point, "pp"), _int(point, "dp")
    shape = shape_facts(point)
    pool = pool or kv_pool(point, shape, profile, tp, pp)
    shape = ModelShape(**{**shape.__dict__, "kv_bytes_per_token": float(pool["kv_bytes_per_token"])})
    engine = str(point["engine"])
    spec = spec_of(point)
    release = vllm_release(point) if engine_key(engine) == "vllm" else point.get("engine_version")
    seqs, tokens = default_limits(engine, profile, release, spec is not None, kv_tokens=pool.get("kv_tokens"))
    limits = Limits(max_num_seqs=_int(point, "max_num_seqs", seqs),
                    max_num_batched_tokens=_int(point, "max_num_batched_tokens", tokens),
                    kv_tokens=pool.get("kv_tokens"), reserves_output=reserves_whole_output(engine),
                    read_every=steps_between_reads(_int(point, "scheduler_recv_interval"),
                                                   _int(point, "num_continuous_decode_steps")))
    replicas = dp if tp * pp * dp == _int(point, "gpu_count", tp * pp) else 1
    overlap = overlaps_host_work(engine, release, profile, pp=pp, spec_method=spec.method if spec else None,
                                 nodes=_int(point, "nodes"), stated=_switch(point, "async_scheduling"))
    rates = rates_for(profile, shape, engine, values, tp * pp, overlap, kv_cache_dtype=launch_kv_dtype(point))
    attention_dp = dp if replicas == 1 and 1 < dp <= tp and tp % dp == 0 else 1
    return PerfLaunch(shape, Layout(tp, pp, attention_dp=attention_dp), rates, limits, replicas, spec,
                      offline_occupancy(engine, values))


def output_line(point: Mapping[str, Any], pred: Prediction, intervals: Mapping[str, tuple[float, float]]) -> dict:
    """The output object of one line (the ``perf --points`` contract)."""
    values = {"output_throughput_tok_s": pred.output_throughput_tok_s, "ttft_ms": pred.ttft_ms,
              "tpot_ms": pred.tpot_ms}
    return {
        "id": point.get("id"),
        **{k: round(v, 3) for k, v in values.items()},
        "interval80": {k: [round(v * intervals[k][0], 3), round(v * intervals[k][1], 3)] for k, v in values.items()},
        "binding": pred.binding,
        "ttft_p99_ms": round(pred.ttft_p99_ms, 3),
        "tpot_p99_ms": round(pred.tpot_p99_ms, 3),
        "output_throughput_per_device_tok_s": round(pred.per_device_tok_s, 3),
        "batch": pred.batch,
        "terms_ms": pred.terms_ms,
    }
