""""Can it start" checks: pure functions over facts, launch settings and hardware -> findings.

Each check returns a list of ``Finding`` (error / warning / note) with the smallest fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from servekit.facts.model import ModelFacts
from servekit.findings import Finding
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.planner import FitReport
from servekit.hardware.precision import fp8_kv_cache, precision_gap, quant_method_refusal

CPU_ATTENTION_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256)
FP8_BLOCK = 128
CONTEXT_STEP = 1024
NO_FIX = "a smaller (quantized) variant, or hardware with more memory per device"
USEFUL_CONTEXT = 8192
"""Below this, a shorter --max-model-len is offered last: more memory is the better fix."""


def _round_down(value: int, step: int = CONTEXT_STEP) -> int:
    return value // step * step if value >= step else value


def check_divisibility(facts: ModelFacts, launch: LaunchSettings) -> list[Finding]:
    """Tensor/expert parallel sizes against heads, KV heads, MoE and linear-attention shapes."""
    out: list[Finding] = []
    tp = launch.tp
    heads = facts.num_attention_heads
    if heads % tp:
        fits = [n for n in (1, 2, 4, 8, 16, 32, 64) if heads % n == 0 and n <= tp]
        out.append(Finding(
            "error", "tp-attention-heads",
            f"{heads} attention heads are not divisible by tensor parallel size {tp}; vLLM refuses to start",
            f"use --tensor-parallel-size {fits[-1]} (or another divisor of {heads}) and scale out with "
            "pipeline or data parallelism",
        ))
    kv = facts.num_kv_heads
    if "mla" not in facts.layers and (kv % tp if tp <= kv else tp % kv):
        out.append(Finding(
            "error", "tp-kv-heads",
            f"{kv} KV heads cannot be split or replicated evenly over tensor parallel size {tp}",
            f"use a tensor parallel size that divides {kv} or is a multiple of it",
        ))
    lin = facts.linear
    if lin and any(n % tp for n in lin.split_heads):
        counts = " / ".join(map(str, lin.split_heads))
        out.append(Finding(
            "error", "tp-linear-heads",
            f"{lin.mixer} state heads ({counts}) are not divisible by tensor parallel size {tp}",
            "choose a tensor parallel size that divides each of them",
        ))
    out += _block_quant_checks(facts, launch)
    moe = facts.moe
    if moe and launch.expert_parallel:
        ep = tp * launch.dp
        if moe.num_experts % ep:
            out.append(Finding(
                "error", "ep-experts",
                f"{moe.num_experts} experts are not divisible by the expert parallel size {ep} (TP x DP)",
                "choose TP x DP that divides the expert count",
            ))
    if facts.vocab_size and facts.vocab_size % tp:
        out.append(Finding(
            "note", "tp-vocab",
            f"vocabulary {facts.vocab_size} is not divisible by {tp}; the engine pads the embedding",
        ))
    if launch.pp > facts.num_layers:
        out.append(Finding(
            "error", "pp-layers",
            f"pipeline parallel size {launch.pp} exceeds the {facts.num_layers} layers",
            f"use --pipeline-parallel-size <= {facts.num_layers}",
        ))
    return out


def _block_quant_checks(facts: ModelFacts, launch: LaunchSettings) -> list[Finding]:
    """Block-scaled (FP8 [128, 128]) weights shard only on whole blocks."""
    quant = facts.quantization
    if not quant or not quant.weight_block_size:
        return []
    block = quant.weight_block_size[0]
    sharded: list[tuple[str, int | None, int]] = [("intermediate_size", facts.intermediate_size, launch.tp)]
    if facts.moe and facts.moe.moe_intermediate_size:
        # expert parallelism places whole experts on ranks instead of slicing each one
        split = 1 if launch.expert_parallel else launch.tp
        sharded.append(("moe_intermediate_size", facts.moe.moe_intermediate_size, split))
    out = []
    for name, size, split in sharded:
        if not size or split == 1:
            continue
        if size % split or (size // split) % block:
            out.append(Finding(
                "error", "tp-block-quant",
                f"{name} {size} / TP {split} = {size / split:g} is not a multiple of the FP8 "
                f"weight block {block}; block-scaled weights cannot be sharded",
                "use a smaller tensor parallel size, or --enable-expert-parallel for MoE layers",
            ))
    return out


def check_precision(precision: str | None, device: Device, *, kv_cache_dtype: str = "auto") -> list[Finding]:
    """Weight precision and KV dtype against the accelerator (``servekit.hardware.precision``)."""
    out: list[Finding] = []
    gap = precision_gap(precision, device.profile)
    if gap is not None:
        out.append(Finding(
            "warning" if gap.weight_only else "error", f"precision-{gap.precision}",
            f"{gap.reason}; {device.name} ({device.brand} {device.generation or 'unknown'}) is not one",
            "pick a BF16 or INT4 (W4A16) variant, or hardware of a newer generation",
        ))
    if kv_cache_dtype.startswith("fp8") and fp8_kv_cache(device.profile) is False:
        out.append(Finding(
            "warning", "kv-fp8-arch",
            f"FP8 KV cache on {device.generation or device.name} lacks fp8e4nv kernels",
            "use --kv-cache-dtype auto, or fp8_e5m2",
        ))
    return out


def check_quant_method(facts: ModelFacts, device: Device) -> list[Finding]:
    """The checkpoint's quantization method against the methods the platform's vLLM serves."""
    method = facts.quantization.method if facts.quantization is not None else None
    reason = quant_method_refusal(method, device.profile.platform)
    if reason is None:
        return []
    return [Finding(
        "error", "precision-quant-method",
        f"{facts.model_id} is quantized with {method}: {reason}",
        f"pick a BF16, FP8 (quant_method fp8), AWQ or compressed-tensors checkpoint for {device.name}",
    )]


def check_cpu_head_size(facts: ModelFacts) -> list[Finding]:
    """vLLM's CPU attention accepts only some head sizes; others fail at the first request."""
    if facts.head_dim in CPU_ATTENTION_HEAD_SIZES:
        return []
    return [Finding(
        "error", "cpu-head-size",
        f"head_dim {facts.head_dim} is not supported by the vLLM CPU attention backend "
        "(\"Unsupported CPU attention configuration\")",
        f"use a model whose head_dim is one of {', '.join(map(str, CPU_ATTENTION_HEAD_SIZES))}",
    )]


def check_device_count(launch: LaunchSettings, device: Device, nodes: int = 1) -> list[Finding]:
    world = launch.tp * launch.pp * launch.dp
    have = device.count * nodes
    if world > have:
        return [Finding(
            "error", "world-size",
            f"TP {launch.tp} x PP {launch.pp} x DP {launch.dp} = {world} ranks but {device.name} x {nodes} "
            f"node(s) has {have} devices",
            "lower the parallel sizes or add nodes",
        )]
    return []


def check_fit(
    report: FitReport,
    facts: ModelFacts,
    launch: LaunchSettings,
    device: Device,
    replan: Callable[[LaunchSettings], FitReport] | None = None,
) -> list[Finding]:
    """Does the plan leave room for one request at --max-model-len; the smallest fixes if not.

    With ``replan`` (launch settings -> report), a candidate fix is offered only when it makes
    the launch fit; without it, candidates are offered unverified."""
    if report.available_kv_gib <= 0:
        return [Finding(
            "error", "fit-weights",
            f"weights ({report.weights_gib_per_rank:.2f} GiB/rank) plus activation and runtime "
            f"({report.activation_gib + report.runtime_gib + report.cudagraph_gib + report.buffers_gib:.2f} GiB) "
            "exceed the "
            f"{report.budget_gib:.2f} GiB budget per device",
            _first_working(_memory_candidates(facts, launch, device), replan) or NO_FIX,
        )]
    if report.max_concurrency < 1:
        shorter = _round_down(report.longest_context)
        candidates = _memory_candidates(facts, launch, device)
        useful = report.longest_context >= max(USEFUL_CONTEXT, report.max_model_len // 8)
        if shorter:
            shorten = ("--max-model-len", replace(launch, max_model_len=shorter))
            candidates.insert(0 if useful else len(candidates), shorten)
        fixes = _working(candidates, replan) or [NO_FIX]
        return [Finding(
            "error", "fit-context",
            f"the KV pool holds {report.kv_tokens:,} tokens, less than one request of "
            f"--max-model-len {report.max_model_len:,}",
            "; or ".join(fixes),
        )]
    out: list[Finding] = []
    seqs = launch.max_num_seqs
    if "linear" in facts.layers and report.block_size and seqs:
        blocks = report.num_blocks
        if 0 < blocks < seqs:
            out.append(Finding(
                "error", "fit-linear-state",
                f"only {blocks} cache blocks for {seqs} sequences; every running sequence of a hybrid "
                "linear-attention model needs its own state block",
                f"--max-num-seqs {max(1, blocks // 2)}",
            ))
    if seqs and report.max_concurrency < seqs:
        out.append(Finding(
            "note", "fit-concurrency",
            f"{report.max_concurrency:.2f} requests of {report.max_model_len:,} tokens fit at once "
            f"(--max-num-seqs {seqs}); longer queues wait for KV blocks",
        ))
    return out


Candidate = tuple[str, LaunchSettings]


def _memory_candidates(facts: ModelFacts, launch: LaunchSettings, device: Device) -> list[Candidate]:
    """Launch changes that free memory per rank, least disruptive first."""
    out: list[Candidate] = []
    if launch.kv_cache_dtype == "auto" and fp8_kv_cache(device.profile):
        out.append(("--kv-cache-dtype fp8", replace(launch, kv_cache_dtype="fp8")))
    heads = facts.num_attention_heads
    for n in (2, 4, 8, 16):
        if n > launch.tp and heads % n == 0 and n * launch.pp <= device.count:
            out.append((f"--tensor-parallel-size {n}", replace(launch, tp=n)))
    if facts.has_vision and not launch.language_model_only:
        out.append(("--language-model-only", replace(launch, language_model_only=True)))
    return out


def _describe(label: str, candidate: LaunchSettings) -> str:
    return f"--max-model-len {candidate.max_model_len}" if label == "--max-model-len" else label


def _working(candidates: list[Candidate], replan: Callable[[LaunchSettings], FitReport] | None) -> list[str]:
    if replan is None:
        return [_describe(label, c) for label, c in candidates]
    return [_describe(label, c) for label, c in candidates if replan(c).fits]


def _first_working(candidates: list[Candidate], replan: Callable[[LaunchSettings], FitReport] | None) -> str | None:
    found = _working(candidates, replan)
    return found[0] if found else None
