"""Per-rank memory plan and KV pool for one launch, by the engine's memory rule for the device.

Each engine declares its memory model as data (``Engine.memory``, read from the registry):

* utilization (vLLM on GPU): the budget is ``gpu_memory_utilization x device memory``; the KV
  pool gets what weights, the activation peak and runtime overheads leave, sized in blocks by the
  hybrid allocator (``servekit.fit.kv``).
* cpu-space (vLLM on CPU): the pool is ``VLLM_CPU_KVCACHE_SPACE`` GiB (or
  ``--kv-cache-memory-bytes``) laid out in the rule's blocks over every attention layer, exactly
  as the engine logs ``CPU KV cache size``; without either, utilization of the node's memory less
  the process.
* free-fraction (MAX): ``device_memory_utilization`` of the memory left free after weights and
  overheads.
* whole-device (QAIC): KV lives in the compiled program (ctx_len x batch); the device budget is
  all of it.
* static-fraction (SGLang): weights and the KV pool are ``--mem-fraction-static`` of the device's
  memory, the fraction the release picks from the GPU and the launch when none is given
  (``MemoryRule.static_fraction``); activations and CUDA graphs live in the rest, so the pool is
  what weights and the runtime leave of the fraction.

A CPU device takes the engine's CPU rule (the native engine's when it has none); the rule's
``report_as`` name (``vllm-cpu``) is also accepted as an engine name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, field, replace

from servekit.engines.common.specs import (
    BUDGET_CPU_SPACE,
    BUDGET_FREE_FRACTION,
    BUDGET_STATIC_FRACTION,
    BUDGET_WHOLE_DEVICE,
    MemoryHooks,
    MemoryRule,
)
from servekit.engines.registry import engine_names, get_engine, native_engine
from servekit.facts.model import ModelFacts
from servekit.fit.conversion import load_dtype
from servekit.fit.dtypes import kv_dtype_bytes
from servekit.fit.hardware import Device
from servekit.fit.kv import KVOptions, PoolLayout, pool_layout
from servekit.fit.launch import LaunchSettings
from servekit.fit.memory import GIB, RankMemory, rank_memory
from servekit.fit.scheduler import effective_max_model_len, scheduler_limits
from servekit.fit.versions import VllmRun
from servekit.records import record


def _cpu_rule() -> MemoryRule:
    rule = native_engine().memory.cpu_rule
    assert rule is not None  # the native engine always declares its CPU rule
    return rule


def engine_choices() -> tuple[str, ...]:
    """Engine names fit accepts: every engine, plus the native engine's CPU rule by its name."""
    cpu_name = _cpu_rule().report_as
    names = engine_names()
    return (names[0], *((cpu_name,) if cpu_name else ()), *names[1:])


ENGINES = engine_choices()


def memory_model(engine: str, device_kind: str) -> tuple[MemoryHooks, MemoryRule]:
    """The engine's memory hooks and the rule that applies on ``device_kind``."""
    if engine == _cpu_rule().report_as:
        return native_engine().memory, _cpu_rule()
    hooks = get_engine(engine).memory
    return hooks, hooks.rule_for(device_kind) or _cpu_rule()


@record
class FitRequest:
    """One fit question: a model's facts on a device under given launch settings."""

    facts: ModelFacts
    device: Device
    launch: LaunchSettings
    engine: str = "vllm"
    cpu_kvcache_space_gib: float | None = None
    """VLLM_CPU_KVCACHE_SPACE; None means the engine's own rule (utilization of node memory)."""
    device_memory_utilization: float | None = None
    available_kv_gib: float | None = None
    """Known KV memory per rank (from a start-up log); skips the memory model."""
    weights_gib_per_rank: float | None = None
    """Known weights per rank; overrides the facts' weight bytes."""
    weights_as_loaded: bool = False
    """``weights_gib_per_rank`` is the engine's own figure after loading (``Model loading took``),
    not the checkpoint's share: nothing the load adds is counted on top."""
    engine_version: str | None = None
    """vLLM version whose memory accounting to follow; None means the newest."""
    engine_env: Mapping[str, str] = field(default_factory=dict)
    """Environment of the launch (``VLLM_USE_V1``, ``VLLM_USE_FLASHINFER_SAMPLER``)."""
    engine_generation: str | None = None
    """``v0`` or ``v1`` when the launch states which vLLM engine ran; None: the release's default."""

    @property
    def run(self) -> VllmRun:
        return VllmRun(self.engine_version, self.engine_env, self.device.profile.platform, self.engine_generation)


@record
class FitReport:
    """The answer to a fit question: the memory budget, weights, KV cache and the verdict."""

    engine: str
    device: str
    tp: int
    pp: int
    max_model_len: int
    kv_cache_dtype: str
    budget_gib: float
    weights_gib_per_rank: float
    activation_gib: float
    runtime_gib: float
    cudagraph_gib: float
    available_kv_gib: float
    kv_bytes_per_token: float
    linear_state_bytes_per_seq: int
    block_size: int
    kv_tokens: int
    max_concurrency: float
    longest_context: int
    weights_known: bool
    num_blocks: int = 0
    buffers_gib: float = 0.0
    """The runner's and drafter's persistent buffers (``servekit.fit.memory.buffers_gib``)."""
    device_memory_gib: float = 0.0
    """One device's memory as the engine sees it; the budget is this times the utilization."""
    device_memory_source: str = ""
    """Where ``device_memory_gib`` comes from (the device table's log, or an assumption)."""
    weights_added: tuple[tuple[str, float], ...] = ()
    """What the load adds to the checkpoint, per cause, GiB per rank (included in the weights)."""

    @property
    def fits(self) -> bool:
        return self.available_kv_gib > 0 and self.max_concurrency >= 1

    def to_dict(self) -> dict:
        out = asdict(self)
        out["fits"] = self.fits
        out["weights_added"] = {what: round(gib, 4) for what, gib in self.weights_added}
        for key, value in out.items():
            if isinstance(value, float):
                out[key] = round(value, 4)
        return out


EAGLE_HEAD_LAYERS = 1
"""Decoder layers of an EAGLE / EAGLE-3 head when the launch does not say (a stated assumption: the
published heads for Llama and Qwen models carry one layer, built with the target's attention shape)."""


def draft_kv_layers(facts: ModelFacts, launch: LaunchSettings) -> int:
    """Attention layers a drafter adds to the KV pool: its layers' caches live in the same pool as
    the target's (the model runner's KV cache spec covers every attention layer it builds): the
    checkpoint's MTP layers when they draft, an EAGLE head's layers, a stated draft network's."""
    if launch.uses_mtp:
        return facts.mtp_layers
    if launch.draft_layers is not None:
        return launch.draft_layers
    return EAGLE_HEAD_LAYERS if launch.uses_eagle else 0


def kv_options(
    facts: ModelFacts, launch: LaunchSettings, device: Device, kv_bytes: float, run: VllmRun | None = None
) -> KVOptions:
    run = run or VllmRun()
    return KVOptions(
        kv_bytes=kv_bytes,
        tp=launch.tp,
        pp=launch.pp,
        max_model_len=effective_max_model_len(facts, launch),
        block_size=launch.block_size,
        spec_tokens=launch.spec_tokens,
        mtp_layers=draft_kv_layers(facts, launch),
        prefix_caching=run.prefix_caching(launch.prefix_caching, "linear" in facts.layers),
        max_num_batched_tokens=scheduler_limits(facts, launch, device, run).max_num_batched_tokens,
        context_parallel=launch.dcp,
        sliding_as_full=not run.pools_sliding_apart,
    )


def longest_context(layout_for, available_bytes: float, upper: int) -> int:
    """Largest max_model_len whose single request fits ``available_bytes`` (binary search)."""
    if available_bytes <= 0:
        return 0
    if layout_for(upper).bytes_for_one_request() <= available_bytes:
        return upper
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if layout_for(mid).bytes_for_one_request() <= available_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _report(
    req: FitRequest,
    layout: PoolLayout,
    budget: float,
    mem: RankMemory,
    available_gib: float,
    kv_tokens: int,
    longest: int,
    kv_dtype: str,
    rule: MemoryRule,
) -> FitReport:
    mml = effective_max_model_len(req.facts, req.launch)
    return FitReport(
        engine=rule.report_as or req.engine,
        device=req.device.name,
        tp=req.launch.tp,
        pp=req.launch.pp,
        max_model_len=mml,
        kv_cache_dtype=kv_dtype,
        budget_gib=budget,
        device_memory_gib=req.device.memory_gib,
        device_memory_source=req.device.profile.memory_source,
        weights_gib_per_rank=mem.weights,
        activation_gib=mem.activation,
        runtime_gib=mem.runtime,
        cudagraph_gib=mem.cudagraph,
        available_kv_gib=available_gib,
        kv_bytes_per_token=layout.kv_bytes_per_token,
        linear_state_bytes_per_seq=sum(g.state_bytes * g.layers for g in layout.groups if g.kind == "linear"),
        block_size=layout.block_size,
        kv_tokens=kv_tokens,
        max_concurrency=kv_tokens / mml if mml else 0.0,
        longest_context=longest,
        weights_known=req.weights_gib_per_rank is not None or req.facts.weights is not None,
        num_blocks=int(available_gib * GIB // layout.block_bytes) if available_gib > 0 else 0,
        buffers_gib=mem.buffers,
        weights_added=mem.load_added,
    )


def launch_facts(facts: ModelFacts, launch: LaunchSettings) -> ModelFacts:
    """The facts as the launch runs them: ``--mamba-ssm-cache-dtype`` (other than ``auto``) sets the
    recurrent state's dtype of linear-attention layers (``MambaStateDtypeCalculator``:
    ``mamba_ssm_cache_dtype`` wins over the config's and the model's dtype)."""
    chosen = launch.mamba_ssm_cache_dtype
    if facts.linear is None or not chosen or chosen == "auto":
        return facts
    return replace(facts, linear=replace(facts.linear, state_dtype=chosen))


def plan_fit(req: FitRequest) -> FitReport:
    """The memory plan of one rank and the KV pool it leaves."""
    hooks, rule = memory_model(req.engine, req.device.kind)
    facts, launch, device = launch_facts(req.facts, req.launch), req.launch, req.device
    kv_dtype = launch.kv_cache_dtype
    if hooks.default_kv_dtype and kv_dtype == "auto":
        kv_dtype = hooks.default_kv_dtype
    model_dtype = load_dtype(facts, launch)
    kv_bytes = kv_dtype_bytes(kv_dtype, model_dtype)
    run = req.run
    mem = rank_memory(facts, launch, device, req.weights_gib_per_rank, run, req.weights_as_loaded)
    if not rule.counts_cuda_graphs:
        mem = replace(mem, cudagraph=0.0)  # no CUDA graphs captured inside this engine's budget
    if not rule.counts_runner_buffers:
        mem = replace(mem, buffers=0.0)  # vLLM's runner buffers: only its GPU worker profiles them
    if not rule.profile_run:
        mem = replace(mem, activation=0.0, runtime=0.0)  # sized from the memory in use after loading
    if rule.budget == BUDGET_STATIC_FRACTION:
        mem = replace(mem, activation=0.0)  # the activations live in the memory the fraction leaves out
    budget, available = _budget_and_kv(req, mem, rule)
    opts = kv_options(facts, launch, device, kv_bytes, run)
    block = rule.mla_block_size if rule.mla_block_size and "mla" in facts.layers else rule.block_size
    if not launch.block_size and block:
        opts = replace(opts, block_size=block)
    layout = pool_layout(facts, opts)
    in_tokens = rule.concurrency_in_tokens
    if in_tokens or (in_tokens is None and run.reports_concurrency_tokens):
        kv_tokens = layout.tokens_for(available * GIB, opts.max_model_len)
    else:
        kv_tokens = layout.legacy_tokens_for(available * GIB, launch.dcp)
    cap = rule.pool_blocks_cap(layout.blocks_per_request, launch.max_num_seqs)
    if cap is not None:  # a pool sized for whole requests, not the whole budget (MAX on a CPU)
        blocks = min(layout.blocks_for(available * GIB), cap)
        available, kv_tokens = blocks * layout.block_bytes / GIB, blocks * layout.block_size
    longest = longest_context(
        lambda n: pool_layout(facts, replace(opts, max_model_len=n)), available * GIB, opts.max_model_len
    )
    return _report(req, layout, budget, mem, available, kv_tokens, longest, kv_dtype, rule)


def _known_kv(req: FitRequest) -> float | None:
    """KV memory per rank already known: from a start-up log, or ``--kv-cache-memory-bytes``."""
    if req.available_kv_gib is not None:
        return req.available_kv_gib
    if req.launch.kv_cache_memory_bytes:
        return req.launch.kv_cache_memory_bytes / GIB
    return None


def default_utilization(req: FitRequest, rule: MemoryRule) -> float:
    """The share of device memory budgeted when the launch sets none: the vLLM release's default
    (0.92 from 0.20) for vLLM's rules, else the rule's own."""
    return req.run.default_utilization if rule.release_utilization else rule.default_utilization


def _budget_and_kv(req: FitRequest, mem: RankMemory, rule: MemoryRule) -> tuple[float, float]:
    """(budget, KV memory) per rank in GiB, by the memory rule."""
    launch, device = req.launch, req.device
    known = _known_kv(req)
    if rule.budget == BUDGET_CPU_SPACE:
        # VLLM_CPU_KVCACHE_SPACE (whole GiB) or --kv-cache-memory-bytes; else utilization of the
        # node's memory less what the process already holds
        budget = device.memory_gib * (launch.gpu_memory_utilization or default_utilization(req, rule))
        if req.cpu_kvcache_space_gib is not None:
            return budget, req.cpu_kvcache_space_gib
        return budget, known if known is not None else budget - mem.weights - rule.process_gib
    if rule.budget == BUDGET_FREE_FRACTION:
        util = req.device_memory_utilization or rule.default_utilization
        available = (device.memory_gib - mem.total) * util
        return device.memory_gib, known if known is not None else available
    if rule.budget == BUDGET_WHOLE_DEVICE:
        return device.memory_gib, known if known is not None else device.memory_gib - mem.weights - mem.runtime
    if rule.budget == BUDGET_STATIC_FRACTION and rule.static_fraction is not None:
        fraction = launch.gpu_memory_utilization or rule.static_fraction(
            device.memory_gib * 1024, launch.tp, launch.pp, req.engine_version, launch.max_num_batched_tokens,
            launch.spec_method, "mla" in req.facts.layers)
        budget = device.memory_gib * fraction
        return budget, known if known is not None else budget - mem.weights - mem.runtime
    budget = device.memory_gib * (launch.gpu_memory_utilization or default_utilization(req, rule))
    return budget, known if known is not None else budget - mem.total
