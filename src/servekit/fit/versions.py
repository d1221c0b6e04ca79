"""vLLM releases changed how they account memory and report the pool: a launch's version selects
the rules it ran under from the table in ``servekit.fit.release_rules``.

A version that cannot be read, or an untagged development build (``0.1.devN``), counts as the
newest release; a development build of a release (``0.9.1.dev705``) as that release; a release
given only approximately (``~0.11.0``, ``0.11.x``) as the last patch of its minor release. A
release is (major, minor, patch): some defaults changed between patch releases (0.8.4, 0.8.5,
0.11.1, 0.20.1).

Besides the version, the engine generation matters: releases before 0.11 still carry the V0
engine, which sizes the pool with its own scheduler defaults (``servekit.fit.scheduler``), its
own sampler and no CUDA graphs in the budget; which engine ran follows the release's default on
the launch's platform and ``VLLM_USE_V1`` (``VllmRun``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from servekit.fit.release_rules import RULES, VersionRule

__all__ = ["RULES", "VersionRule", "VllmRun", "release", "rule"]


UNTAGGED = (0, 1)
"""major.minor of a development build made without vLLM's release tags (``0.1.devN``)."""
TRITON_SAMPLER_MIN_ROWS = 8
"""Rows from which the Triton top-k/top-p kernel replaces the sort (v0.17.0 apply_top_k_top_p)."""
_ENGINE_WORD = re.compile(r"\bV([01])(?![.\w])")
"""A version text that names the engine (``V0 engine (~0.6.x)``)."""
_VERSION = re.compile(r"(~)?\s*v?(\d+)\.(\d+)(?:\.(\d+|x))?(?:rc(\d+))?(?:\.?dev(\d+))?", re.IGNORECASE)
NEWEST_PATCH: dict[tuple[int, int], int] = {
    (0, 6): 6, (0, 7): 3, (0, 8): 5, (0, 9): 2, (0, 10): 2, (0, 11): 2, (0, 14): 1, (0, 15): 1,
    (0, 17): 1, (0, 18): 1, (0, 19): 1, (0, 20): 2, (0, 22): 1, (0, 25): 1, (0, 27): 1,
}
"""The last patch release of each vLLM minor release that had more than one (the PyPI release
history of ``vllm``, 0.6 to 0.33); other minors had only ``.0``."""
DEV_BUILD_NEAR_BASE = 200
"""Commits past its base below which a development build reads as its base release (a stated
assumption): vLLM's main branch moves some 35-40 commits a day and cuts a release about every two
weeks (0.24.0 to 0.33.0: nine releases in four months), so a build under 200 commits past the
release it grew from carries little of the next one. The public logs agree: 0.11.1.dev12 still
samples with FlashInfer (0.22 GiB peak on 4x A30, vLLM issue 'OPT-2.7B OOM'), 0.20.1rc1.dev16
still logs its pool as blocks (noonghunna/club-3090), while 0.9.2.dev364 already runs V1 on ROCm
(AMD's Ray-on-ROCm blog) and 0.26.1rc1.dev608 lays hybrid pools out with prefix caching (the
Qwen3.8-27B recipe guide)."""


def _approximate(match: re.Match[str]) -> bool:
    """Whether a version text gives its release only approximately: ``~0.11.0``, ``0.11.x``, or
    no patch number at all (``0.11``)."""
    return bool(match.group(1)) or match.group(4) is None or match.group(4).lower() == "x"


def _previous(found: tuple[int, int, int]) -> tuple[int, int, int]:
    """The release before ``found``: the patch before it, else the last patch of the minor before."""
    major, minor, patch = found
    if patch > 0:
        return major, minor, patch - 1
    if minor > 0:
        return major, minor - 1, NEWEST_PATCH.get((major, minor - 1), 0)
    return found


def release(engine_version: str | None) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a version text, or None for unknown versions and untagged
    development builds (``0.1.devN``: built without the release tags).

    A development build (``0.9.1.dev705``, ``0.26.1rc1.dev608``: N commits past the release it
    grew from, named for the next one) reads as the release it names, or as the release before
    that when it is fewer than ``DEV_BUILD_NEAR_BASE`` commits past its base. A release given only
    approximately (``~0.11.0``, ``0.11.x``, ``0.11``) reads as the last patch of that minor release
    (``NEWEST_PATCH``): such labels come from launches of whatever image of that series was
    current, and the rules that changed between patches (0.8.4, 0.8.5, 0.11.1) follow the later
    patch."""
    match = _VERSION.search(engine_version or "")
    if match is None:
        return None
    major, minor = int(match.group(2)), int(match.group(3))
    dev = match.group(6)
    if dev is not None and (major, minor) == UNTAGGED:
        return None
    if dev is None and _approximate(match):
        return major, minor, NEWEST_PATCH.get((major, minor), 0)
    patch = match.group(4)
    named = (major, minor, int(patch) if patch and patch.isdigit() else 0)
    if dev is not None and int(dev) < DEV_BUILD_NEAR_BASE:
        return _previous(named)
    return named


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
        """Whether the CUDA-graph memory estimate comes out of the KV budget (V1 from 0.20, on ROCm
        from 0.26), unless ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` says otherwise."""
        if self.v0 or self.rule("cudagraphs_in_budget") != "yes":
            return False
        if self.platform == "rocm" and self.rule("cudagraphs_on_rocm") != "yes":
            return False
        return str(self.env.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "1")).strip() != "0"

    @property
    def reports_concurrency_tokens(self) -> bool:
        """Whether the pool is logged as max_concurrency x max_model_len (V1 from 0.20.1)."""
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

    def sampler_constant(self, rows: int = 8) -> str:
        """The constant for the dummy sampler pass over ``rows`` sequences: V0's sampler; in V1 the
        release's path, where ``VLLM_USE_FLASHINFER_SAMPLER`` picks FlashInfer (on CUDA) or the sort,
        and the Triton kernel takes only batches of at least 8 rows."""
        if self.v0:
            return "sampler_bytes_per_logit_v0"
        chosen = self.rule("sampler")
        switch = str(self.env.get("VLLM_USE_FLASHINFER_SAMPLER", "")).strip()
        if self.platform == "cuda" and switch in ("0", "1"):
            if switch == "1":
                return "sampler_bytes_per_logit_flashinfer"
            if chosen == "sampler_bytes_per_logit_flashinfer":
                chosen = "sampler_bytes_per_logit_sort"
        if chosen == "sampler_bytes_per_logit_flashinfer" and self.platform != "cuda":
            chosen = "sampler_bytes_per_logit_sort"
        if chosen == "sampler_bytes_per_logit_triton" and rows < TRITON_SAMPLER_MIN_ROWS:
            chosen = "sampler_bytes_per_logit_sort"
        return chosen

    @property
    def non_torch_constant(self) -> str:
        """The constant for one rank's non-torch memory: ROCm's, else the CUDA figure under this
        release's snapshot order."""
        return "non_torch_gib_rocm" if self.platform == "rocm" else self.rule("non_torch")

    def tp_comm_constant(self, switched: bool) -> str:
        """The constant for what tensor-parallel collectives add, over NVLink/NVSwitch or xGMI
        (``switched``) or PCIe, as this release's snapshot order counts them."""
        excluded = self.rule("tp_comm") == "setup_excluded"
        if switched:
            return "comm_nvswitch_gib_after_setup" if excluded else "comm_nvswitch_gib"
        return "comm_pcie_gib_after_setup" if excluded else "comm_pcie_gib"

    @property
    def moe_workspace_persists(self) -> bool:
        """Whether the fused-MoE workspace stays allocated through the dummy sampler pass (V1 from 0.14)."""
        return not self.v0 and self.rule("moe_workspace") == "persistent"

    @property
    def counts_runner_buffers(self) -> bool:
        """Whether the model runner's and drafter's persistent buffers count as non-KV memory
        (V1 from 0.27: the profile measures all memory consumed since start-up)."""
        return not self.v0 and self.rule("accounting") == "consumed"


def counts_cudagraphs(engine_version: str | None) -> bool:
    """Whether this vLLM version takes CUDA-graph memory out of the KV budget (on CUDA)."""
    return VllmRun(engine_version).counts_cudagraphs


def reports_concurrency_tokens(engine_version: str | None) -> bool:
    """Whether this vLLM version logs the pool as max_concurrency x max_model_len."""
    return VllmRun(engine_version).reports_concurrency_tokens
