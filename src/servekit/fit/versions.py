"""vLLM releases changed how they account memory and report the pool: one table of those rules,
each with the release that changed it, so a launch's version selects the rule it ran under.

A version that cannot be read, or an untagged development build (``0.1.devN``), counts as the
newest release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class VersionRule:
    id: str
    since: tuple[int, int]
    value: str
    what: str
    source: str


RULES: tuple[VersionRule, ...] = (
    VersionRule(
        "profile_tokens", (0, 0), "max_model_len",
        "V0 profiles one forward pass over max(max_num_batched_tokens, max_model_len) tokens "
        "(chunked prefill off); the sampler peak is small beside it",
        "vllm/worker/model_runner.py profile_run (V0); the V0 peak_torch_memory of Llama-3.1-8B grows "
        "with --max-model-len (17.06 -> 17.98 GiB from 20k to 29k tokens)",
    ),
    VersionRule(
        "profile_tokens", (0, 8), "batched",
        "the V1 engine (default from 0.8) profiles max_num_batched_tokens tokens, then a dummy "
        "sampler pass over max_num_seqs rows of logits",
        "vllm/v1/worker/gpu_model_runner.py profile_run -> _dummy_run(max_num_tokens), _dummy_sampler_run; "
        "vllm-project/vllm#13594",
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

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(dev\d+))?")


def release(engine_version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a version text, or None for unknown / development builds."""
    match = _VERSION.search(engine_version or "")
    if match is None or match.group(3):
        return None
    return int(match.group(1)), int(match.group(2))


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


def counts_cudagraphs(engine_version: str | None) -> bool:
    """Whether this vLLM version takes CUDA-graph memory out of the KV budget."""
    return rule("cudagraphs_in_budget", engine_version) == "yes"


def reports_concurrency_tokens(engine_version: str | None) -> bool:
    """Whether this vLLM version logs the pool as max_concurrency x max_model_len."""
    return rule("pool_report", engine_version) == "concurrency"
