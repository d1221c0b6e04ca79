"""What a device and an engine give the speed model: achievable rates and scheduler limits.

Rates are the device table's figures (``servekit.hardware.device_compute``) times the fitted
fractions (``servekit.perf.constants``; an AMD part's scaled by the measured gap between its
achievable and peak figures and NVIDIA's, ``constants.vendor_scale``; TensorRT-LLM's FLOP/s by its
fitted multiple, ``flops_scale.trtllm``); a device without a link figure talks over PCIe Gen4.
Hardware ``local`` on a CPU machine takes its measured row (``servekit.perf.local_cpu``), whose
figures are achieved through the server's own kernel: the CPU backend's share of the streamed rate
is fitted (``bandwidth_fraction.vllm_cpu``), its products take the measured rate whole
(``flops_fraction.vllm_cpu``, and a fitted per-token cost beside them, ``Rates.token_s``). A launch on the CPU platform takes
the CPU backend's overheads (``*.vllm_cpu`` constants); all are fitted on their own calibration
runs (``servekit.perf.constants.CPU_CALIBRATION``).
Scheduler limits are the launch's own ``max_num_seqs`` / ``max_num_batched_tokens``, else the
engine's defaults: vLLM's per release and device (``servekit.fit.scheduler.v1_defaults``),
SGLang's per release, device and KV pool (``servekit.engines.sglang.scheduler``), TensorRT-LLM's from
``constants``.
"""

from __future__ import annotations

from collections.abc import Mapping

from servekit.engines.sglang.scheduler import chunked_prefill_tokens, max_running_requests
from servekit.errors import ServekitError
from servekit.fit.hardware import Device
from servekit.fit.scheduler import v1_defaults
from servekit.fit.versions import VllmRun
from servekit.hardware import LOCAL
from servekit.hardware.device_compute import PCIE4, DeviceCompute, compute_format
from servekit.hardware.profile import HardwareProfile
from servekit.perf.constants import CPU_KEY, ENGINES, constant, fitted_values, flops_fraction, vendor_scale
from servekit.perf.shape import ModelShape
from servekit.perf.terms import Rates


class PerfError(ServekitError):
    """A launch the speed model has no figures for."""


def engine_key(engine: str) -> str:
    """The engine whose overhead and defaults apply (vLLM's plugins and forks run as vLLM)."""
    return engine if engine in ENGINES else "vllm"


def offline_occupancy(engine: str, values: Mapping[str, float] | None = None) -> float:
    """The fitted share of an offline run's prompts ``engine`` runs at once (``offline_occupancy.ENGINE``)."""
    return {**fitted_values(), **(values or {})}[f"offline_occupancy.{engine_key(engine)}"]


def overhead_key(engine: str, profile: HardwareProfile) -> str:
    """The suffix of the overhead constants of ``engine`` on ``profile``'s platform."""
    return CPU_KEY if profile.platform == "cpu" else engine_key(engine)


def measured_cpu(profile: HardwareProfile) -> bool:
    """Whether the profile's speed row is this machine's CPU as measured (``local_cpu``)."""
    return profile.compute is None and profile.id == LOCAL and profile.platform == "cpu"


def device_row(profile: HardwareProfile) -> DeviceCompute:
    """The speed row of the profile's device: the table's, or this machine's measured CPU."""
    if profile.compute is not None:
        return profile.compute
    if measured_cpu(profile):
        from servekit.perf.local_cpu import local_cpu_row  # measures once per machine; only hardware local asks

        return local_cpu_row(profile.display_name)
    raise PerfError(f"no speed figures for {profile.id!r} ({profile.display_name})",
                    fix="add its datasheet row to servekit.hardware.device_compute")


def shares_source(profile: HardwareProfile) -> str:
    """Where the achievable shares of ``profile``'s device come from, in a few words: a platform
    no calibration run measured takes NVIDIA's, a stated assumption."""
    if measured_cpu(profile):
        return "this machine's CPU as measured, at the CPU backend's fitted shares"
    if profile.platform == "rocm":
        return ("the shares fitted on NVIDIA GPU runs, scaled by AMD's measured gap "
                "(flops_scale.amd, bandwidth_scale.amd)")
    if profile.platform in ("cuda", None, ""):
        return "the shares fitted on NVIDIA GPU runs"
    return (f"the shares fitted on NVIDIA GPU runs, carried over: no calibration run is on a {profile.platform} "
            "device (an assumption)")


ASYNC_PLATFORMS = ("cuda", "rocm")
"""Platforms whose vLLM runs the async scheduler by default from the rule's release (the CPU
platform turns it off; TPU and Ascend run their own plugins' schedulers)."""


OVERLAP_BY_DEFAULT = ("sglang", "trtllm")
"""Engines whose scheduler prepares the next step while the device runs the current one unless
told not to: SGLang's overlap scheduler (``python/sglang/srt/server_args.py``
``disable_overlap_schedule: bool = False``, on since 0.4.0) and TensorRT-LLM's PyTorch backend
(``tensorrt_llm/llmapi/llm_args.py`` ``disable_overlap_scheduler`` default ``False``)."""


def overlaps_host_work(engine: str, version: str | None, profile: HardwareProfile, *, pp: int = 1,
                       spec_method: str | None = None, nodes: int = 1, stated: bool | None = None) -> bool:
    """Whether the launch runs a step's host work beside the device's work of the step before.
    vLLM: its async scheduling, as the launch states it (``--async-scheduling`` /
    ``--no-async-scheduling``, ``stated``), else as the release's default has it (the
    ``async_scheduling`` rule of ``servekit.fit.release_rules``); never with a draft method other
    than EAGLE or MTP, or across nodes (where vLLM's default executor is Ray, which lacks it).
    SGLang and TensorRT-LLM: their overlap schedulers (``OVERLAP_BY_DEFAULT``), taken as off with
    speculative decoding (SGLang's server arguments turn it off for its draft methods before its
    second speculative pipeline; assumed alike for TensorRT-LLM). No engine overlaps with pipeline
    parallelism."""
    key = engine_key(engine)
    if profile.platform not in ASYNC_PLATFORMS or pp > 1:
        return False
    if key in OVERLAP_BY_DEFAULT:
        return not spec_method
    if nodes > 1:
        return False
    method = (spec_method or "").lower()
    if method and method not in ("eagle", "eagle3") and not method.endswith("mtp"):
        return False
    if stated is not None:
        return stated
    return VllmRun(version, {}, profile.platform).rule("async_scheduling") == "on"


def attention_format(kv_cache_dtype: str | None) -> str:
    """The number format attention's products run in: FP8 over an FP8 KV cache (TensorRT-LLM's FP8
    context attention, vLLM's and SGLang's FP8 attention backends), else 16-bit; never the 4-bit
    format of an FP4 checkpoint's linears (no engine here has a 4-bit attention kernel)."""
    return "fp8" if str(kv_cache_dtype or "").lower().startswith("fp8") else "bf16"


def rates_for(profile: HardwareProfile, shape: ModelShape, engine: str,
              values: Mapping[str, float] | None = None, ranks: int = 1, overlap: bool = False,
              kv_cache_dtype: str | None = None) -> Rates:
    """What one of the launch's ``ranks`` devices achieves for ``shape``: a measured row streams
    the rank's share of the weights at the rate the probe measured for a set of that size
    (``DeviceCompute.memory_for``); ``overlap``: the engine's host work runs beside the device's
    (``overlaps_host_work``); attention's products run in the format of ``kv_cache_dtype``
    (``attention_format``), never faster than the linears."""
    row = device_row(profile)
    fmt = compute_format(row, shape.compute_format)
    flops = row.flops(fmt) if fmt else None
    if flops is None:
        raise PerfError(f"{profile.id!r}: the device table has no dense FLOPs figure for "
                        f"{shape.compute_format} or a wider format",
                        fix="add the datasheet's figure to servekit.hardware.device_compute")
    v = {**fitted_values(), **(values or {})}
    key = overhead_key(engine, profile)
    attention = 0.0
    if row.measured:  # achieved on large operations; the CPU backend's share of them is fitted
        memory_share, flops_share = v[f"bandwidth_fraction.{CPU_KEY}"], v.get(f"flops_fraction.{CPU_KEY}", constant(f"flops_fraction.{CPU_KEY}"))
    else:
        memory_share = v["bandwidth_fraction"] * vendor_scale("bandwidth", profile.generation)
        scale = vendor_scale("flops", profile.generation) * v.get(f"flops_scale.{key}", 1.0)
        flops_share = flops_fraction(v, profile.generation, fmt) * scale
        attention_fmt = compute_format(row, attention_format(kv_cache_dtype)) or fmt
        attention = min(flops * flops_share,
                        (row.flops(attention_fmt) or flops) * flops_fraction(v, profile.generation, attention_fmt) * scale)
    memory = row.memory_for(shape.weight_bytes / ranks) if row.measured else row.memory_gb_s
    return Rates(
        memory=memory * 1e9 * memory_share,
        flops=flops * flops_share,
        link=(row.link_gb_s or PCIE4) * 1e9,
        layer_s=(constant(f"layer_overhead_us.{CPU_KEY}") if key == CPU_KEY else v["layer_overhead_us"]) * 1e-6,
        step_s=v[f"step_overhead_ms.{key}"] * 1e-3,
        seq_s=v[f"seq_overhead_us.{key}"] * 1e-6,
        mla_seq_s=0.0 if key == CPU_KEY else v["mla_seq_layer_us"] * 1e-6,
        seq_layer_s=0.0 if key == CPU_KEY else v["seq_layer_us"] * 1e-6,
        expert_flops=flops * flops_share * v["moe_flops_share"],
        attention_flops=attention,
        allreduce_s=v["allreduce_latency_us"] * 1e-6,
        request_s=v[f"request_overhead_ms.{key}"] * 1e-3,
        expert_memory=memory * 1e9 * memory_share * (1.0 if row.measured else expert_stream_share(v, fmt)),
        activations=key != CPU_KEY,
        token_s=v[f"token_layer_overhead_us.{CPU_KEY}"] * 1e-6 if key == CPU_KEY else 0.0,
        overlap=overlap,
    )


def expert_stream_share(values: Mapping[str, float], fmt: str) -> float:
    """The routed experts' streaming rate as a share of dense weights' (``moe_bandwidth_share``);
    experts in a 4-bit format on a part with an FP4 rate run their own kernels
    (``moe_bandwidth_share.fp4``)."""
    return values["moe_bandwidth_share.fp4"] if fmt == "fp4" else constant("moe_bandwidth_share")


def default_limits(engine: str, profile: HardwareProfile, version: str | None,
                   speculative: bool = False, world_size: int = 1, kv_tokens: int | None = None,
                   context_len: int | None = None) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) the engine picks when the launch names neither
    (vLLM on CPU scales both with the ranks of the world, ``world_size``; SGLang picks its step's
    tokens by release and device memory and its requests from the KV pool of ``kv_tokens``
    tokens and the ``context_len``, ``servekit.engines.sglang.scheduler``, and lowers its requests
    when it decodes speculatively)."""
    key = engine_key(engine)
    if key == "vllm":
        tokens, seqs = v1_defaults(Device(profile), VllmRun(version, {}, profile.platform), world_size=world_size)
        return seqs, tokens
    if key == "sglang":
        seqs = (int(constant("max_batch.sglang.spec")) if speculative
                else max_running_requests(kv_tokens, context_len))
        return seqs, chunked_prefill_tokens(profile.memory_gib, version)
    return int(constant(f"max_batch.{key}")), int(constant(f"max_tokens.{key}"))


def reserves_whole_output(engine: str) -> bool:
    """Whether the engine's scheduler reserves KV room for a request's whole output when it admits
    it: TensorRT-LLM's default capacity policy GUARANTEED_NO_EVICT does (tensorrt_llm/llmapi/llm_args.py
    SchedulerConfig); vLLM allocates blocks as tokens are written and preempts when none is free
    (vllm/v1/core/sched/scheduler.py), and SGLang admits against an estimate of the output that
    decays to a tenth and retracts requests when the pool runs out
    (python/sglang/srt/managers/schedule_policy.py, scheduler.py)."""
    return engine_key(engine) == "trtllm"
