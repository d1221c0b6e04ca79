"""vLLM releases changed how they account memory and report the pool: one table of those rules,
each with the release that changed it, so a launch's version selects the rule it ran under.

A version that cannot be read, or an untagged development build (``0.1.devN``), counts as the
newest release; a development build of a release (``0.9.1.dev705``) as that release. A release is (major, minor, patch): some defaults changed between patch releases
of 0.8.

Besides the version, the engine generation matters: releases before 0.11 still carry the V0
engine, which sizes the pool with its own scheduler defaults (``servekit.fit.scheduler``), its
own sampler and no CUDA graphs in the budget; which engine ran follows the release's default on
the launch's platform and ``VLLM_USE_V1`` (``VllmRun``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class VersionRule:
    id: str
    since: tuple[int, int]
    value: str
    what: str
    source: str


RULES: tuple[VersionRule, ...] = (
    VersionRule(
        "v1_default", (0, 0), "none",
        "the V0 engine runs unless VLLM_USE_V1=1 (V1 is an opt-in preview)",
        "vllm/envs.py VLLM_USE_V1 (0.7.x)",
    ),
    VersionRule(
        "v1_default", (0, 8), "cuda",
        "V1 runs by default on CUDA; other platforms fall back to V0 ('Non-CUDA is supported on V1, but off "
        "by default for now'); VLLM_USE_V1=0 selects V0",
        "vllm/engine/arg_utils.py EngineArgs._is_v1_supported_oracle (0.8.x)",
    ),
    VersionRule(
        "v1_default", (0, 9, 2), "cuda+rocm",
        "ROCm joins the platforms that run V1 by default",
        "vllm-project/vllm#19440 '[ROCm][V1] Adding ROCm to the list of plaforms using V1 by default' "
        "(merged 2025-06-10)",
    ),
    VersionRule(
        "v1_default", (0, 11), "only",
        "V0 is gone: VLLM_USE_V1 no longer selects an engine",
        "vLLM 0.11.0 removed the V0 engine code paths (vllm/worker/, vllm/engine/llm_engine.py)",
    ),
    VersionRule(
        "profile_tokens", (0, 0), "max_model_len",
        "the default engine (V0) profiles one forward pass over max_num_batched_tokens, which is "
        "max(max_model_len, 2048) unless chunked prefill is on (servekit.fit.scheduler)",
        "vllm/config.py SchedulerConfig.__post_init__; vllm/worker/model_runner.py profile_run (V0); the V0 "
        "peak_torch_memory of Llama-3.1-8B grows with --max-model-len (17.06 -> 17.98 GiB from 20k to 29k tokens)",
    ),
    VersionRule(
        "profile_tokens", (0, 8), "batched",
        "the default engine (V1) profiles max_num_batched_tokens tokens, then a dummy sampler pass over "
        "max_num_seqs rows of logits",
        "vllm/v1/worker/gpu_model_runner.py profile_run -> _dummy_run(max_num_tokens), _dummy_sampler_run; "
        "vllm-project/vllm#13594",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 0), "h100_names_1024",
        "V1 scheduler defaults: 8192 batched tokens on devices named H100/H200, else 2048; 1024 "
        "sequences everywhere",
        "vllm-project/vllm#12369 (device-name check in EngineArgs._set_default_args_v1); V1's "
        "max_num_seqs default of 1024, reverted for most hardware by vllm-project/vllm#16158",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 8, 4), "h100_names",
        "1024 sequences only on H100/H200; 256 elsewhere",
        "vllm-project/vllm#16158 '[V1] Revert the default max_num_seqs to V0 values for most hardware' "
        "(merged 2025-04-07)",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 8, 5), "memory_70",
        "8192 tokens and 1024 sequences on any device of at least 70 GiB (A100 80GB included)",
        "vllm-project/vllm#17073 '[Minor] Use larger batch sizes for A100/B100/B200/MI300x' (merged 2025-04-23)",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 9), "memory_70_not_a100",
        "the 70 GiB tier leaves out devices named A100",
        "vllm-project/vllm#17885 '[Perf] Use small max_num_batched_tokens for A100' (merged 2025-05-09)",
    ),
    VersionRule(
        "v1_batch_defaults", (0, 28), "memory_70_160",
        "devices of at least 160 GiB (B200/B300, MI300X/MI325X) default to 16384 batched tokens",
        "vllm/engine/arg_utils.py EngineArgs.get_batch_defaults at tag v0.28.0 ('for GPUs like B200/B300 "
        "with >= 160GB memory, use the largest defaults'); absent at v0.27.0",
    ),
    VersionRule(
        "sampler", (0, 0), "sampler_bytes_per_logit_flashinfer",
        "the dummy sampler takes the FlashInfer top-k/top-p path (no sort)",
        "vllm/v1/sample/ops/topk_topp_sampler.py",
    ),
    VersionRule(
        "sampler", (0, 11), "sampler_bytes_per_logit_cloned",
        "the dummy sampler runs the sort-based top-k/top-p twice with the logits cloned",
        "logged activation peaks of ~0.11-0.16 images (see the constant)",
    ),
    VersionRule(
        "sampler", (0, 17), "sampler_bytes_per_logit_sorted",
        "one sort-based pass; the warm-up no longer clones the logits",
        "vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run ('No .clone() of logits'); Qwen3-14B "
        "activation 5.64 -> 2.23 GiB from 0.16 to 0.17",
    ),
    VersionRule(
        "cudagraphs_in_budget", (0, 0), "no",
        "CUDA graphs are captured after the KV cache is sized, outside the budget", "vllm/v1/worker/gpu_worker.py",
    ),
    VersionRule(
        "cudagraphs_in_budget", (0, 21), "yes",
        "the CUDA-graph memory estimate comes out of the KV budget "
        "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1)",
        "vllm/v1/worker/gpu_worker.py determine_available_memory: 'CUDA graph memory profiling is "
        "enabled (default since v0.21.0)'; vllm/envs.py",
    ),
    VersionRule(
        "hybrid_allocator", (0, 0), "no",
        "every attention layer keeps a full-length KV cache: sliding-window layers are pooled as full "
        "attention (one KV cache group)",
        "vllm/v1/core/kv_cache_utils.py before the hybrid allocator ('Hybrid KV cache manager is disabled "
        "... There can be some waste of KV cache memory')",
    ),
    VersionRule(
        "hybrid_allocator", (0, 9, 1), "yes",
        "sliding-window and full-attention layers form separate KV cache groups sharing one block pool",
        "vllm-project/vllm#17996 '[v1] Hybrid Memory Allocator' (merged June 2025; first in 0.9.1)",
    ),
    VersionRule(
        "hybrid_prefix_caching", (0, 0), "opt-in",
        "models with linear-attention or Mamba layers beside attention serve without prefix caching "
        "unless --enable-prefix-caching (one state block per linear layer group and request instead of "
        "two in 'align' mode)",
        "vllm/engine/arg_utils.py _set_default_chunked_prefill_and_prefix_caching_args before "
        "vllm-project/vllm#50991: default_prefix_caching = is_prefix_caching_supported and not is_hybrid",
    ),
    VersionRule(
        "hybrid_prefix_caching", (0, 28), "default",
        "hybrid models get prefix caching by default, in 'align' mamba cache mode (main-branch development "
        "builds named after an earlier release may carry it already: the recipe's RTX 5090 pools of "
        "0.26.1rc1.dev608 are laid out with it; such a build reads as the release it names)",
        "vllm-project/vllm#50991 '[Mamba] enable prefix cache by default' (merged 2026-08-04); "
        "vllm/model_executor/models/config.py MambaModelConfig at v0.32.0",
    ),
    VersionRule(
        "pool_report", (0, 0), "blocks",
        "'GPU KV cache size' is num_blocks // num_groups x block_size (under-reports hybrid models)",
        "vllm/v1/core/kv_cache_utils.py before 0.21",
    ),
    VersionRule(
        "pool_report", (0, 21), "concurrency",
        "'GPU KV cache size' is max_concurrency x max_model_len",
        "vllm/v1/core/kv_cache_utils.py get_max_concurrency_for_kv_cache_config",
    ),
)

UNTAGGED = (0, 1)
"""major.minor of a development build made without vLLM's release tags (``0.1.devN``)."""
_ENGINE_WORD = re.compile(r"\bV([01])(?![.\w])")
"""A version text that names the engine (``V0 engine (~0.6.x)``)."""
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?:\.?(dev\d+))?")


def release(engine_version: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a version text, or None for unknown versions and untagged
    development builds (``0.1.devN``: built without the release tags). A development build of a
    release (``0.9.1.dev705``) reads as that release."""
    match = _VERSION.search(engine_version or "")
    if match is None:
        return None
    found = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    return None if match.group(4) and found[:2] == UNTAGGED else found


def rule(rule_id: str, engine_version: str | None) -> str:
    """The value of one rule for this version: the latest entry whose release is not newer."""
    found = release(engine_version)
    entries = sorted((r for r in RULES if r.id == rule_id), key=lambda r: r.since)
    if not entries:
        raise KeyError(f"unknown version rule {rule_id!r}")
    chosen = entries[-1]
    if found is not None:
        chosen = [r for r in entries if r.since <= found][-1]
    return chosen.value


@dataclass(frozen=True)
class VllmRun:
    """What selects the accounting of one vLLM launch: its version text, its environment
    (``VLLM_USE_V1``, ``VLLM_USE_FLASHINFER_SAMPLER``) and the platform it ran on."""

    version: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    platform: str = "cuda"

    def rule(self, rule_id: str) -> str:
        return rule(rule_id, self.version)

    @property
    def v0(self) -> bool:
        """Whether the V0 engine sized the pool: the engine the version text names, else the
        release's default on this platform unless ``VLLM_USE_V1`` says otherwise (before V0 was
        removed)."""
        default = self.rule("v1_default")
        if default == "only":
            return False
        stated = _ENGINE_WORD.search(self.version or "")
        if stated:
            return stated.group(1) == "0"
        chosen = str(self.env.get("VLLM_USE_V1", "")).strip()
        if chosen in ("0", "1"):
            return chosen == "0"
        return self.platform not in default.split("+")

    @property
    def counts_cudagraphs(self) -> bool:
        """Whether the CUDA-graph memory estimate comes out of the KV budget (V1 from 0.21)."""
        return not self.v0 and self.rule("cudagraphs_in_budget") == "yes"

    @property
    def reports_concurrency_tokens(self) -> bool:
        """Whether the pool is logged as max_concurrency x max_model_len (V1 from 0.21)."""
        return not self.v0 and self.rule("pool_report") == "concurrency"

    @property
    def pools_sliding_apart(self) -> bool:
        """Whether sliding-window layers keep their own KV cache groups (the hybrid allocator)."""
        return not self.v0 and self.rule("hybrid_allocator") == "yes"

    def prefix_caching(self, stated: bool | None, hybrid: bool) -> bool:
        """Whether prefix caching is on: as the launch states it, else the release's default
        (on for attention-only models; for hybrid models from 0.28)."""
        if stated is not None:
            return stated
        return not hybrid or self.rule("hybrid_prefix_caching") == "default"

    @property
    def sampler_constant(self) -> str:
        """The constant for the dummy sampler pass: V0's sampler, the native sort-based path where
        FlashInfer's is not taken (ROCm, or ``VLLM_USE_FLASHINFER_SAMPLER=0``), else the release's."""
        if self.v0:
            return "sampler_bytes_per_logit_v0"
        chosen = self.rule("sampler")
        flashinfer_off = self.platform != "cuda" or str(self.env.get("VLLM_USE_FLASHINFER_SAMPLER", "")) == "0"
        if chosen == "sampler_bytes_per_logit_flashinfer" and flashinfer_off:
            return "sampler_bytes_per_logit_native"
        return chosen


def counts_cudagraphs(engine_version: str | None) -> bool:
    """Whether this vLLM version takes CUDA-graph memory out of the KV budget."""
    return VllmRun(engine_version).counts_cudagraphs


def reports_concurrency_tokens(engine_version: str | None) -> bool:
    """Whether this vLLM version logs the pool as max_concurrency x max_model_len."""
    return VllmRun(engine_version).reports_concurrency_tokens
